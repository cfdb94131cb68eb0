"""Transposed 3-D convolution upsampling by 2 (3x3x3 kernel, stride 2, padding 1, output_padding 1, no bias)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 3-D convolution, stride 2"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 8,
    "depth": 6,
    "height": 8,
    "width": 8,
}

batch_size = 8
in_channels = 64
out_channels = 32
depth = 16
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose3d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            bias=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]


def _out_voxels():
    def out(size):
        return (size - 1) * stride - 2 * padding + kernel_size + output_padding

    return out(depth) * out(height) * out(width)


def kbench_flops():
    voxels = depth * height * width
    return 2 * batch_size * in_channels * voxels * out_channels * kernel_size**3


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = in_channels * out_channels * kernel_size**3
    y = batch_size * out_channels * _out_voxels()
    return 4 * (x + w + y)
