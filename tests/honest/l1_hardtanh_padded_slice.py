"""Honest, output a slice of a larger fresh buffer: each row is written into a buffer
whose rows are padded to a multiple of 128 columns (aligned rows), and forward returns
the [:, :dim] slice: a non-contiguous view of memory nobody else holds."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardtanh_rows_kernel(x_ptr, y_ptr, cols, y_stride, lo, hi, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask)
    tl.store(y_ptr + row * y_stride + c, tl.minimum(tl.maximum(x, lo), hi), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        padded = triton.cdiv(cols + 1, 128) * 128
        y = torch.empty(rows, padded, device=x.device, dtype=x.dtype)
        hardtanh_rows_kernel[(rows, triton.cdiv(cols, 1024))](
            x, y, cols, padded, self.min_val, self.max_val, BLOCK=1024
        )
        return y[:, :cols]
