"""Honest: F.normalize(x, p=2, dim=-1), one program per block of 32 rows of 256."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2_normalize_kernel(x_ptr, y_ptr, rows, cols, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.arange(0, BC)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None].to(tl.int64) * cols + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    norm = tl.maximum(tl.sqrt(tl.sum(x * x, axis=1)), 1e-12)
    tl.store(y_ptr + offs, x / norm[:, None], mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        y = torch.empty_like(x)
        l2_normalize_kernel[(triton.cdiv(rows, 32),)](x, y, rows, cols, BR=32, BC=triton.next_power_of_2(cols))
        return y
