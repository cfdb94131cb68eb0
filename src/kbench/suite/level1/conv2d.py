"""2-D convolution, square 3x3 kernel, stride 1, padding 1, with bias, on square images."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D convolution"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=True
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (2 * in_channels * kernel_size * kernel_size + 1)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_size * kernel_size + out_channels
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
