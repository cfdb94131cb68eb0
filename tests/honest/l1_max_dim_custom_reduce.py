"""Honest: the maximum over dim 1 of a (batch, reduce, dim) tensor in one Triton kernel that
reduces with ``tl.reduce`` and a combine function of its own (``tl.maximum``), the padding
loaded as -inf so it never wins."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _maximum(a, b):
    return tl.maximum(a, b)


@triton.jit
def max_dim1_kernel(x_ptr, y_ptr, R, D, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    rows = tl.arange(0, BLOCK_R)
    mask = (rows[:, None] < R) & (cols[None, :] < D)
    tile = tl.load(x_ptr + b * R * D + rows[:, None] * D + cols[None, :], mask=mask, other=float("-inf"))
    tl.store(y_ptr + b * D + cols, tl.reduce(tile, 0, _maximum), mask=cols < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        batch, reduce, dim = x.shape
        y = torch.empty((batch, dim), device=x.device, dtype=x.dtype)
        block_d = 32
        max_dim1_kernel[(batch, triton.cdiv(dim, block_d))](x, y, reduce, dim, BLOCK_R=triton.next_power_of_2(reduce),
                                                             BLOCK_D=block_d)
        return y
