"""2-D convolution (square 5x5 kernel, no padding, no bias) on wide, non-square images (128 x 1024)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D convolution, non-square input"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 12, "width": 40}

batch_size = 8
in_channels = 32
out_channels = 64
height = 128
width = 1024
kernel_size = 5


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def _out_hw():
    return height - kernel_size + 1, width - kernel_size + 1


def kbench_flops():
    oh, ow = _out_hw()
    return 2 * batch_size * out_channels * oh * ow * in_channels * kernel_size * kernel_size


def kbench_bytes():
    oh, ow = _out_hw()
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_size * kernel_size
    y = batch_size * out_channels * oh * ow
    return 4 * (x + w + y)
