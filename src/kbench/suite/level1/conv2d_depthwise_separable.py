"""Depthwise-separable 2-D convolution: depthwise 3x3 (padding 1) then pointwise 1x1, no biases."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D depthwise-separable convolution"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}

batch_size = 32
in_channels = 256
out_channels = 256
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    pixels = batch_size * height * width
    depthwise = 2 * pixels * in_channels * kernel_size * kernel_size
    pointwise = 2 * pixels * out_channels * in_channels
    return depthwise + pointwise


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = in_channels * kernel_size * kernel_size + out_channels * in_channels
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
