"""MobileNet depthwise stage: bias-free depthwise 3x3 convolution, BatchNorm2d with batch statistics (random affine), ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Depthwise Conv2d + BatchNorm + ReLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 32
channels = 384
height = 112
width = 112
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels, bias=False
        )
        self.norm = nn.BatchNorm2d(channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    outputs = batch_size * channels * height * width
    return outputs * (2 * kernel_size * kernel_size + 10)


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * (kernel_size * kernel_size + 2)
    return 4 * (2 * x + w)
