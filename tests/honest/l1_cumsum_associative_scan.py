"""Honest: cumulative sum along rows in one Triton kernel with ``tl.associative_scan`` and a
combine function of its own (``@triton.jit`` add), one program per row, the row padded to a
power of two with zeros (which leave every prefix sum as it is)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def cumsum_rows_kernel(x_ptr, y_ptr, length, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < length
    x = tl.load(x_ptr + row * length + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * length + cols, tl.associative_scan(x, 0, _add), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, length = x.shape
        y = torch.empty_like(x)
        cumsum_rows_kernel[(rows,)](x, y, length, BLOCK=triton.next_power_of_2(length))
        return y
