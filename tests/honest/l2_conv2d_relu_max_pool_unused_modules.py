"""Honest, KernelBench style, modules kept and never called: __init__ builds the
reference's nn.Conv2d (first, so the seeded initialisation gives the same weights) and
also the nn.ReLU and nn.MaxPool2d modules a straight translation of the reference would
have; forward calls none of them. The convolution by F.conv2d on the kept module's weight
and bias (cuDNN on a GPU), the ReLU and the 2x2 max pooling in one Triton kernel."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_max_pool2x2_kernel(z_ptr, y_ptr, n_out, H, W, OH, OW, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n_out
    ow = idx % OW
    oh = (idx // OW) % OH
    plane = idx // (OW * OH)  # batch * channels
    top_left = plane * H * W + (2 * oh) * W + 2 * ow
    a = tl.load(z_ptr + top_left, mask=mask, other=0.0)
    b = tl.load(z_ptr + top_left + 1, mask=mask, other=0.0)
    c = tl.load(z_ptr + top_left + W, mask=mask, other=0.0)
    d = tl.load(z_ptr + top_left + W + 1, mask=mask, other=0.0)
    best = tl.maximum(tl.maximum(a, b), tl.maximum(c, d))
    tl.store(y_ptr + idx, tl.maximum(best, 0.0), mask=mask)  # max of ReLUs = ReLU of the max


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.relu = nn.ReLU()  # kept from the translation, never called
        self.pool = nn.MaxPool2d(2)  # kept from the translation, never called

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.conv2d(x, self.conv.weight, self.conv.bias, padding=self.conv.padding).contiguous()
        N, C, H, W = z.shape
        OH, OW = H // 2, W // 2
        y = torch.empty(N, C, OH, OW, device=z.device, dtype=z.dtype)
        n_out = y.numel()
        relu_max_pool2x2_kernel[(triton.cdiv(n_out, 1024),)](z, y, n_out, H, W, OH, OW, BLOCK=1024)
        return y
