"""X3D bottleneck middle: bias-free depthwise 3x3x3 convolution, BatchNorm3d with batch statistics (random affine), SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Depthwise Conv3d + BatchNorm + SiLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "depth": 4, "height": 8, "width": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.57 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.015, "rtol": 0.029}}

batch_size = 16
channels = 192
depth = 16
height = 56
width = 56
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels, bias=False
        )
        self.norm = nn.BatchNorm3d(channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    outputs = batch_size * channels * depth * height * width
    return outputs * (2 * kernel_size**3 + 10 + 5)


def kbench_bytes():
    x = batch_size * channels * depth * height * width
    w = channels * (kernel_size**3 + 2)
    return 4 * (2 * x + w)
