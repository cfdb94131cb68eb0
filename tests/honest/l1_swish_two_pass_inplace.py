"""Honest, in-place writes into a fresh output: a first kernel writes sigmoid(x) into
torch.empty_like(x); a second multiplies that buffer in place by x and the channel
weight. Two launches, the output written twice, never an input."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    tl.store(y_ptr + idx, tl.sigmoid(tl.load(x_ptr + idx, mask=mask)), mask=mask)


@triton.jit
def scale_in_place_kernel(y_ptr, x_ptr, w_ptr, n, cols, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    y = tl.load(y_ptr + idx, mask=mask)
    x = tl.load(x_ptr + idx, mask=mask)
    w = tl.load(w_ptr + idx % cols, mask=mask)
    tl.store(y_ptr + idx, y * x * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = (triton.cdiv(n, 2048),)
        sigmoid_kernel[grid](x, y, n, BLOCK=2048)
        scale_in_place_kernel[grid](y, x, self.weight, n, x.shape[-1], BLOCK=2048)
        return y
