"""2-D convolution with an asymmetric 3x7 kernel, 'same' padding (1, 3), no bias, on square images."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D convolution, asymmetric 3x7 kernel"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}

batch_size = 8
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_h = 3
kernel_w = 7


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_h, kernel_w):
        super().__init__()
        self.conv = nn.Conv2d(
            in_channels,
            out_channels,
            (kernel_h, kernel_w),
            padding=(kernel_h // 2, kernel_w // 2),
            bias=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_h, kernel_w]


def kbench_flops():
    return 2 * batch_size * out_channels * height * width * in_channels * kernel_h * kernel_w


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_h * kernel_w
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
