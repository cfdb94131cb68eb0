"""Transposed 2-D convolution with a 3x5 kernel, stride (1, 2), padding (1, 2), dilation (2, 1), no bias, on 128 x 256 inputs."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 2-D convolution, dilated, asymmetric"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 8, "height": 12, "width": 20}

batch_size = 16
in_channels = 64
out_channels = 64
height = 128
width = 256
kernel_h = 3
kernel_w = 5
stride_h = 1
stride_w = 2
padding_h = 1
padding_w = 2
dilation_h = 2
dilation_w = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, padding, dilation):
        super().__init__()
        self.conv = nn.ConvTranspose2d(
            in_channels,
            out_channels,
            tuple(kernel),
            stride=tuple(stride),
            padding=tuple(padding),
            dilation=tuple(dilation),
            bias=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [
        in_channels,
        out_channels,
        [kernel_h, kernel_w],
        [stride_h, stride_w],
        [padding_h, padding_w],
        [dilation_h, dilation_w],
    ]


def _out_pixels():
    oh = (height - 1) * stride_h - 2 * padding_h + dilation_h * (kernel_h - 1) + 1
    ow = (width - 1) * stride_w - 2 * padding_w + dilation_w * (kernel_w - 1) + 1
    return oh * ow


def kbench_flops():
    taps = kernel_h * kernel_w
    return 2 * batch_size * in_channels * height * width * out_channels * taps


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = in_channels * out_channels * kernel_h * kernel_w
    y = batch_size * out_channels * _out_pixels()
    return 4 * (x + w + y)
