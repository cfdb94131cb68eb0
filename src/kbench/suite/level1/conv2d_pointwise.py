"""Pointwise (1x1) 2-D convolution, no bias: a per-pixel channel mixing."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D pointwise (1x1) convolution"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 32, "height": 16, "width": 16}

batch_size = 16
in_channels = 256
out_channels = 512
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


def kbench_flops():
    return 2 * batch_size * height * width * out_channels * in_channels


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
