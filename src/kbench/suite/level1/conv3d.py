"""3-D convolution, cubic 3x3x3 kernel, stride 1, padding 1, no bias, on volumes of 32 x 64 x 64."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "3-D convolution"
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
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    voxels = batch_size * depth * height * width
    return 2 * voxels * out_channels * in_channels * kernel_size**3


def kbench_bytes():
    voxels = batch_size * depth * height * width
    w = out_channels * in_channels * kernel_size**3
    return 4 * (voxels * in_channels + w + voxels * out_channels)
