"""Xception separable convolution: depthwise 3x3, pointwise 1x1 (both bias-free), BatchNorm2d with batch statistics (random affine), ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Depthwise Conv2d + pointwise Conv2d + BatchNorm + ReLU"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.58 of atol 0.03, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.044, "rtol": 0.029}}

batch_size = 64
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.depthwise = nn.Conv2d(
            in_channels,
            in_channels,
            kernel_size,
            padding=kernel_size // 2,
            groups=in_channels,
            bias=False,
        )
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.pointwise(self.depthwise(x))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    pixels = batch_size * height * width
    return pixels * (
        2 * in_channels * kernel_size * kernel_size + out_channels * (2 * in_channels + 10)
    )


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = in_channels * kernel_size * kernel_size + out_channels * (in_channels + 2)
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
