"""CSPDarknet block: bias-free 3x3 convolution, BatchNorm2d with batch statistics (random affine), Mish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + BatchNorm + Mish"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False
        )
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (2 * in_channels * kernel_size * kernel_size + 16)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_size * kernel_size + 2 * out_channels
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
