"""Honest: mean over the last dimension, one program per block of 8 rows."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_last_kernel(x_ptr, y_ptr, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    acc = tl.zeros([BR, BC], tl.float32)
    for start in range(0, cols, BC):
        c = start + tl.arange(0, BC)
        acc += tl.load(x_ptr + r[:, None].to(tl.int64) * cols + c[None, :],
                       mask=(r[:, None] < rows) & (c[None, :] < cols), other=0.0)
    tl.store(y_ptr + r, tl.sum(acc, axis=1) / cols, mask=r < rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        y = torch.empty(x.shape[:-1], device=x.device, dtype=x.dtype)
        mean_last_kernel[(triton.cdiv(rows, 8),)](x, y, rows, cols, BR=8, BC=256)
        return y
