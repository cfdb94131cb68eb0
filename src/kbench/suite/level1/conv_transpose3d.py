"""Transposed 3-D convolution, 3x3x3 kernel, stride 1, no padding (each size grows by 2), no bias."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 3-D convolution"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 8,
    "depth": 8,
    "height": 12,
    "width": 12,
}

batch_size = 8
in_channels = 32
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def _out_voxels():
    grow = kernel_size - 1
    return (depth + grow) * (height + grow) * (width + grow)


def kbench_flops():
    voxels = depth * height * width
    return 2 * batch_size * in_channels * voxels * out_channels * kernel_size**3


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = in_channels * out_channels * kernel_size**3
    y = batch_size * out_channels * _out_voxels()
    return 4 * (x + w + y)
