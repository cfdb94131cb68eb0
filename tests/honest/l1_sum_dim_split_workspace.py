"""Honest, a workspace allocated per call: the sum over dimension 1 of (B, R, D) split
into chunks of R; the first kernel writes each chunk's partial sums into a fresh
(B, chunks, D) workspace, the second adds the partials up."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS_PER_CHUNK = 64


@triton.jit
def partial_sum_kernel(x_ptr, part_ptr, R, D, chunks, ROWS: tl.constexpr, BD: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cols = tl.program_id(2) * BD + tl.arange(0, BD)
    r = chunk * ROWS + tl.arange(0, ROWS)
    mask = (r[:, None] < R) & (cols[None, :] < D)
    tile = tl.load(x_ptr + b * R * D + r[:, None] * D + cols[None, :], mask=mask, other=0.0)
    tl.store(part_ptr + b * chunks * D + chunk * D + cols, tl.sum(tile, axis=0), mask=cols < D)


@triton.jit
def combine_kernel(part_ptr, y_ptr, D, chunks, BD: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BD + tl.arange(0, BD)
    acc = tl.zeros([BD], tl.float32)
    for chunk in range(0, chunks):
        acc += tl.load(part_ptr + b * chunks * D + chunk * D + cols, mask=cols < D, other=0.0)
    tl.store(y_ptr + b * D + cols, acc, mask=cols < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, D = x.shape
        chunks = triton.cdiv(R, ROWS_PER_CHUNK)
        partials = torch.empty(B, chunks, D, device=x.device, dtype=torch.float32)
        y = torch.empty(B, D, device=x.device, dtype=x.dtype)
        partial_sum_kernel[(B, chunks, triton.cdiv(D, 128))](x, partials, R, D, chunks, ROWS=ROWS_PER_CHUNK, BD=128)
        combine_kernel[(B, triton.cdiv(D, 256))](partials, y, D, chunks, BD=256)
        return y
