"""Honest: row softmax in one Triton kernel whose block size is set by ``@triton.heuristics``
from the row length (the next power of two), one program per row, max-subtracted."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n_cols"])})
@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_rows_kernel[(x.shape[0],)](x, y, x.shape[1])
        return y
