"""Grouped transposed 2-D convolution (4 groups, 3x3 kernel, stride 2, padding 1, output_padding 1, no bias)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 2-D convolution, grouped"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "groups": 4, "height": 16, "width": 16}

batch_size = 16
channels = 256
groups = 4
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


class Model(nn.Module):
    def __init__(self, channels, groups, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            channels,
            channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            groups=groups,
            bias=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups, kernel_size, stride, padding, output_padding]


def _out_pixels():
    oh = (height - 1) * stride - 2 * padding + kernel_size + output_padding
    ow = (width - 1) * stride - 2 * padding + kernel_size + output_padding
    return oh * ow


def kbench_flops():
    taps = kernel_size * kernel_size
    return 2 * batch_size * channels * height * width * (channels // groups) * taps


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * (channels // groups) * kernel_size * kernel_size
    y = batch_size * channels * _out_pixels()
    return 4 * (x + w + y)
