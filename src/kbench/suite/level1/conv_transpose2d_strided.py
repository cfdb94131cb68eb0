"""Transposed 2-D convolution upsampling by 2 (4x4 kernel, stride 2, padding 1, no bias)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 2-D convolution, stride 2"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 16, "width": 16}

batch_size = 16
in_channels = 128
out_channels = 64
height = 128
width = 128
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


def _out_pixels():
    oh = (height - 1) * stride - 2 * padding + kernel_size
    ow = (width - 1) * stride - 2 * padding + kernel_size
    return oh * ow


def kbench_flops():
    taps = kernel_size * kernel_size
    return 2 * batch_size * in_channels * height * width * out_channels * taps


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = in_channels * out_channels * kernel_size * kernel_size
    y = batch_size * out_channels * _out_pixels()
    return 4 * (x + w + y)
