"""Honest, KernelBench style: the convolution by F.conv2d (cuDNN); batch normalisation
with batch statistics (the model is in training mode) in Triton: one program per
channel sums and squares into a per-call (C, 2) workspace, then one kernel normalises,
applies the affine parameters and the ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def channel_stats_kernel(z_ptr, stats_ptr, N, C, HW, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    s = tl.zeros([BLOCK], tl.float32)
    ss = tl.zeros([BLOCK], tl.float32)
    for n in range(0, N):
        base = (n * C + c).to(tl.int64) * HW
        for start in range(0, HW, BLOCK):
            p = start + tl.arange(0, BLOCK)
            z = tl.load(z_ptr + base + p, mask=p < HW, other=0.0)
            s += z
            ss += z * z
    count = N * HW
    mean = tl.sum(s, axis=0) / count
    var = tl.maximum(tl.sum(ss, axis=0) / count - mean * mean, 0.0)
    tl.store(stats_ptr + c * 2, mean)
    tl.store(stats_ptr + c * 2 + 1, var)


@triton.jit
def bn_relu_kernel(z_ptr, stats_ptr, w_ptr, b_ptr, y_ptr, n, C, HW, eps, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    c = (idx // HW) % C
    mean = tl.load(stats_ptr + c * 2, mask=mask)
    var = tl.load(stats_ptr + c * 2 + 1, mask=mask)
    z = tl.load(z_ptr + idx, mask=mask)
    y = (z - mean) / tl.sqrt(var + eps) * tl.load(w_ptr + c, mask=mask) + tl.load(b_ptr + c, mask=mask)
    tl.store(y_ptr + idx, tl.maximum(y, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.conv2d(x, self.conv.weight, None, padding=self.conv.padding).contiguous()
        N, C, H, W = z.shape
        stats = torch.empty(C, 2, device=z.device, dtype=torch.float32)
        channel_stats_kernel[(C,)](z, stats, N, C, H * W, BLOCK=1024)
        y = torch.empty_like(z)
        bn_relu_kernel[(triton.cdiv(z.numel(), 2048),)](
            z, stats, self.norm.weight, self.norm.bias, y, z.numel(), C, H * W, self.norm.eps, BLOCK=2048
        )
        return y
