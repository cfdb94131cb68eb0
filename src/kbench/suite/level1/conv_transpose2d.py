"""Transposed 2-D convolution, 3x3 kernel, stride 1, no padding (output grows by 2), with bias."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 2-D convolution"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 16, "width": 16}

batch_size = 32
in_channels = 128
out_channels = 64
height = 128
width = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, bias=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def _out_pixels():
    return (height + kernel_size - 1) * (width + kernel_size - 1)


def kbench_flops():
    taps = kernel_size * kernel_size
    products = 2 * batch_size * in_channels * height * width * out_channels * taps
    return products + batch_size * out_channels * _out_pixels()


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = in_channels * out_channels * kernel_size * kernel_size + out_channels
    y = batch_size * out_channels * _out_pixels()
    return 4 * (x + w + y)
