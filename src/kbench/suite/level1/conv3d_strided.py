"""3-D convolution with stride 2 (3x3x3 kernel, padding 1, no bias): halves every spatial size."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "3-D convolution, stride 2"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 8,
    "depth": 12,
    "height": 16,
    "width": 16,
}

batch_size = 8
in_channels = 32
out_channels = 64
depth = 64
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


def _out_voxels():
    def out(size):
        return (size + 2 * padding - kernel_size) // stride + 1

    return out(depth) * out(height) * out(width)


def kbench_flops():
    return 2 * batch_size * out_channels * _out_voxels() * in_channels * kernel_size**3


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = out_channels * in_channels * kernel_size**3
    y = batch_size * out_channels * _out_voxels()
    return 4 * (x + w + y)
