"""Honest: cumulative sum along rows as a blocked scan, one program per row walking the
row in blocks of 256 (tl.cumsum within a block, a running carry across blocks)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_rows_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    carry = 0.0
    for start in range(0, cols, BLOCK):
        mask = start + c < cols
        x = tl.load(x_ptr + row * cols + start + c, mask=mask, other=0.0)
        scanned = tl.cumsum(x, axis=0) + carry
        tl.store(y_ptr + row * cols + start + c, scanned, mask=mask)
        carry += tl.sum(x, axis=0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        cumsum_rows_kernel[(rows,)](x, y, cols, BLOCK=256)
        return y
