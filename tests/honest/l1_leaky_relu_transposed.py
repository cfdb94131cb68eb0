"""Honest, non-contiguous output: the kernel writes the leaky ReLU of x (rows, cols)
transposed into a fresh (cols, rows) buffer, and forward returns its .t() view, so the
output has the right shape and values but column-major strides."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def leaky_relu_transpose_kernel(x_ptr, yt_ptr, rows, cols, slope, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    x = tl.load(x_ptr + r[:, None].to(tl.int64) * cols + c[None, :], mask=mask)
    y = tl.where(x >= 0, x, x * slope)
    # y^T[c, r] = y[r, c]
    tl.store(yt_ptr + c[None, :].to(tl.int64) * rows + r[:, None], y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        yt = torch.empty(cols, rows, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(rows, 32), triton.cdiv(cols, 64))
        leaky_relu_transpose_kernel[grid](x, yt, rows, cols, self.negative_slope, BR=32, BC=64)
        return yt.t()
