"""Honest, a workspace kept between calls: a (rows, 2) float32 buffer created on the
first call (and again only if the shape changes) holds each row's max and sum of
exponentials; pass one fills it, pass two reads it to write a fresh output. The
buffer is scratch, never returned, never an input."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(x_ptr, stats_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        x = tl.load(x_ptr + row * cols + start + c, mask=start + c < cols, other=float("-inf"))
        new_m = tl.maximum(m, x)
        s = s * tl.exp(m - new_m) + tl.exp(x - new_m)
        s = tl.where(new_m == float("-inf"), 0.0, s)
        m = new_m
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    tl.store(stats_ptr + row * 2, row_max)
    tl.store(stats_ptr + row * 2 + 1, total)


@triton.jit
def normalize_kernel(x_ptr, stats_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = c < cols
    row_max = tl.load(stats_ptr + row * 2)
    total = tl.load(stats_ptr + row * 2 + 1)
    x = tl.load(x_ptr + row * cols + c, mask=mask)
    tl.store(y_ptr + row * cols + c, tl.exp(x - row_max) / total, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._stats = None  # the workspace, kept from call to call

    def _workspace(self, rows: int, device: torch.device) -> torch.Tensor:
        if self._stats is None or self._stats.shape[0] != rows or self._stats.device != device:
            self._stats = torch.empty(rows, 2, device=device, dtype=torch.float32)
        return self._stats

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        stats = self._workspace(rows, x.device)
        y = torch.empty_like(x)
        row_stats_kernel[(rows,)](x, stats, cols, BLOCK=512)
        normalize_kernel[(rows, triton.cdiv(cols, 1024))](x, stats, y, cols, BLOCK=1024)
        return y
