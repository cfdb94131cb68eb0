"""Honest, an integer output: argmax over dimension 1 of (B, R, D), one program per
(batch, block of columns) reading tiles of 128 rows, the first index of the maximum kept on ties (as PyTorch)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_dim1_kernel(x_ptr, y_ptr, R, D, BR: tl.constexpr, BD: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BD + tl.arange(0, BD)
    mask = cols < D
    best = tl.full([BD], float("-inf"), tl.float32)
    best_i = tl.zeros([BD], tl.int64)
    rows = tl.arange(0, BR)
    for r0 in range(0, R, BR):
        r = r0 + rows
        x = tl.load(x_ptr + b * R * D + r[:, None] * D + cols[None, :],
                    mask=(r[:, None] < R) & mask[None, :], other=float("-inf"))
        tile_max = tl.max(x, axis=0)
        # the first row of the tile holding the maximum (ties: the lowest index, as PyTorch)
        tile_i = tl.min(tl.where(x == tile_max[None, :], r[:, None], R), axis=0)
        better = tile_max > best
        best = tl.where(better, tile_max, best)
        best_i = tl.where(better, tile_i.to(tl.int64), best_i)
    tl.store(y_ptr + b * D + cols, best_i, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, R, D = x.shape
        y = torch.empty(B, D, device=x.device, dtype=torch.int64)
        argmax_dim1_kernel[(B, triton.cdiv(D, 64))](x, y, R, D, BR=128, BD=64)
        return y
