"""Honest, KernelBench style with an in-place epilogue: the model's own nn.Conv2d kept
(cuDNN on a GPU), its fresh output then rectified in place by a Triton kernel and
returned (the buffer the convolution just allocated, no input's)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_in_place_kernel(y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    y = tl.load(y_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, tl.maximum(y, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x).contiguous()
        relu_in_place_kernel[(triton.cdiv(y.numel(), 2048),)](y, y.numel(), BLOCK=2048)
        return y
