"""Transposed 1-D convolution upsampling by 2 (kernel 5, stride 2, padding 2, output_padding 1, no bias)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Transposed 1-D convolution"
KBENCH_SMALL = {"batch_size": 4, "in_channels": 16, "out_channels": 8, "length": 256}

batch_size = 32
in_channels = 256
out_channels = 128
length = 8192
kernel_size = 5
stride = 2
padding = 2
output_padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv = nn.ConvTranspose1d(
            in_channels,
            out_channels,
            kernel_size,
            stride=stride,
            padding=padding,
            output_padding=output_padding,
            bias=False,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]


def _out_length():
    return (length - 1) * stride - 2 * padding + kernel_size + output_padding


def kbench_flops():
    # Every input element meets every output channel through every kernel tap.
    return 2 * batch_size * in_channels * length * out_channels * kernel_size


def kbench_bytes():
    x = batch_size * in_channels * length
    w = in_channels * out_channels * kernel_size
    y = batch_size * out_channels * _out_length()
    return 4 * (x + w + y)
