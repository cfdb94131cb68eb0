"""2-D convolution with a 3x3 kernel and unequal dilation (2, 3), padded to keep the spatial size, no bias."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D convolution, dilated"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}

batch_size = 16
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 3
dilation_h = 2
dilation_w = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation_h, dilation_w):
        super().__init__()
        pad = (dilation_h * (kernel_size - 1) // 2, dilation_w * (kernel_size - 1) // 2)
        self.conv = nn.Conv2d(
            in_channels,
            out_channels,
            kernel_size,
            padding=pad,
            dilation=(dilation_h, dilation_w),
            bias=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dilation_h, dilation_w]


def kbench_flops():
    return 2 * batch_size * out_channels * height * width * in_channels * kernel_size * kernel_size


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_size * kernel_size
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
