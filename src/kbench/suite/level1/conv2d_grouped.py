"""Grouped 2-D convolution (8 groups, 3x3 kernel, padding 1, no bias): each group maps 32 to 32 channels."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D convolution, grouped"
KBENCH_SMALL = {"batch_size": 2, "channels": 32, "groups": 4, "height": 16, "width": 16}

batch_size = 32
channels = 256
groups = 8
height = 128
width = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels: int, groups: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=groups, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups, kernel_size]


def kbench_flops():
    per_group_in = channels // groups
    return 2 * batch_size * channels * height * width * per_group_in * kernel_size * kernel_size


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * (channels // groups) * kernel_size * kernel_size
    return 4 * (2 * x + w)
