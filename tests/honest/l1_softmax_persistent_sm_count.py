"""Honest: row softmax in a persistent Triton kernel: as many programs as the GPU has
multiprocessors (``torch.cuda.get_device_properties(...).multi_processor_count``, read once
per device and kept), each looping over rows with a stride of the grid, online max and sum over
column blocks."""

import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl


@functools.lru_cache(maxsize=None)
def _sm_count(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


@triton.jit
def softmax_persistent_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        base = row.to(tl.int64) * n_cols
        m = tl.full((), float("-inf"), tl.float32)
        s = tl.zeros((), tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf"))
            tl.store(y_ptr + base + cols, tl.exp(x - m) / s, mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        programs = min(rows, _sm_count(x.device.index or 0))
        softmax_persistent_kernel[(programs,)](x, y, rows, cols, BLOCK=4096, num_warps=8)
        return y
