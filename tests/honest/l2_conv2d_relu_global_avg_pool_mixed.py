"""Honest, mixed: the convolution (with its bias) by F.conv2d, the ReLU in a Triton
kernel, and the global average pool left to PyTorch (.mean over H and W): small glue a
KernelBench-style solution often keeps. Expected to carry the torch-compute flag."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_kernel(z_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    tl.store(y_ptr + idx, tl.maximum(tl.load(z_ptr + idx, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.conv2d(x, self.conv.weight, self.conv.bias, padding=self.conv.padding).contiguous()
        r = torch.empty_like(z)
        relu_kernel[(triton.cdiv(z.numel(), 2048),)](z, r, z.numel(), BLOCK=2048)
        return r.mean(dim=(2, 3))
