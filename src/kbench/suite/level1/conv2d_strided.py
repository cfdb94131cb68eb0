"""2-D convolution with stride 2 (3x3 kernel, padding 1, no bias): halves the spatial size."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D convolution, stride 2"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 32, "width": 32}

batch_size = 32
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


def _out_hw():
    oh = (height + 2 * padding - kernel_size) // stride + 1
    ow = (width + 2 * padding - kernel_size) // stride + 1
    return oh, ow


def kbench_flops():
    oh, ow = _out_hw()
    return 2 * batch_size * out_channels * oh * ow * in_channels * kernel_size * kernel_size


def kbench_bytes():
    oh, ow = _out_hw()
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_size * kernel_size
    y = batch_size * out_channels * oh * ow
    return 4 * (x + w + y)
