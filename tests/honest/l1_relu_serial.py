"""Honest, deliberately slow: ReLU in a single Triton program that walks the whole
tensor block by block (one launch, no parallelism across the GPU: tens of times
slower than eager at the default size)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_serial_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        idx = start + offsets
        mask = idx < n
        x = tl.load(x_ptr + idx, mask=mask)
        tl.store(y_ptr + idx, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        relu_serial_kernel[(1,)](x, y, x.numel(), BLOCK=2048)
        return y
