"""Honest: GELU (erf) in one Triton kernel whose launch configuration is chosen once per
shape and kept: a module-level dict keyed by (numel, dtype, device) and a
``functools.lru_cache`` on the block-size choice, the caching models write around a launch."""

from __future__ import annotations

import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl

_LAUNCH_CACHE: dict[tuple[int, torch.dtype, str], tuple[tuple[int], int]] = {}


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offsets, y, mask=mask)


@functools.lru_cache(maxsize=None)
def _block_for(n: int) -> int:
    return min(4096, triton.next_power_of_2(max(n, 16)))


def _launch_config(x: torch.Tensor) -> tuple[tuple[int], int]:
    key = (x.numel(), x.dtype, str(x.device))
    config = _LAUNCH_CACHE.get(key)
    if config is None:
        block = _block_for(x.numel())
        config = ((triton.cdiv(x.numel(), block),), block)
        _LAUNCH_CACHE[key] = config
    return config


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        grid, block = _launch_config(x)
        gelu_kernel[grid](x, y, x.numel(), BLOCK=block)
        return y
