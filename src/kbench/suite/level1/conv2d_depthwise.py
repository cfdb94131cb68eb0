"""Depthwise 2-D convolution (groups = channels, 3x3 kernel, padding 1, no bias); memory-bound."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D depthwise convolution"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "height": 32, "width": 32}

batch_size = 32
channels = 256
height = 256
width = 256
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    return 2 * batch_size * channels * height * width * kernel_size * kernel_size


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * kernel_size * kernel_size
    return 4 * (2 * x + w)
