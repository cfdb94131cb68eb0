"""Honest, one Triton launch: the hardsigmoid, launched inside an autocast switched off (a
model's way to be sure nothing around its float32 kernel is cast), the block size picked
from the element count."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardsigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    y = tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)
    tl.store(y_ptr + idx, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type=x.device.type, enabled=False):
            x = x.contiguous()
            y = torch.empty_like(x)
            n = x.numel()
            block = 4096 if n >= 1 << 20 else 1024
            hardsigmoid_kernel[(triton.cdiv(n, block),)](x, y, n, BLOCK=block)
        return y
