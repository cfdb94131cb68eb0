"""3-D convolution with an asymmetric 3x5x7 kernel, no padding, no bias, on non-cubic volumes (16 x 64 x 128)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "3-D convolution, asymmetric 3x5x7 kernel"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 8,
    "depth": 6,
    "height": 10,
    "width": 14,
}

batch_size = 4
in_channels = 32
out_channels = 32
depth = 16
height = 64
width = 128
kernel_d = 3
kernel_h = 5
kernel_w = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_d, kernel_h, kernel_w):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, (kernel_d, kernel_h, kernel_w), bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_d, kernel_h, kernel_w]


def _out_voxels():
    return (depth - kernel_d + 1) * (height - kernel_h + 1) * (width - kernel_w + 1)


def kbench_flops():
    taps = kernel_d * kernel_h * kernel_w
    return 2 * batch_size * out_channels * _out_voxels() * in_channels * taps


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = out_channels * in_channels * kernel_d * kernel_h * kernel_w
    y = batch_size * out_channels * _out_voxels()
    return 4 * (x + w + y)
