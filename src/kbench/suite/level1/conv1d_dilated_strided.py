"""1-D convolution with stride 2 and dilation 4 (kernel 3, no padding, no bias)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "1-D convolution, dilated and strided"
KBENCH_SMALL = {"batch_size": 4, "in_channels": 8, "out_channels": 16, "length": 512}

batch_size = 16
in_channels = 128
out_channels = 256
length = 65536
kernel_size = 3
stride = 2
dilation = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, dilation):
        super().__init__()
        self.conv = nn.Conv1d(
            in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation]


def _out_length():
    return (length - dilation * (kernel_size - 1) - 1) // stride + 1


def kbench_flops():
    return 2 * batch_size * out_channels * _out_length() * in_channels * kernel_size


def kbench_bytes():
    x = batch_size * in_channels * length
    w = out_channels * in_channels * kernel_size
    y = batch_size * out_channels * _out_length()
    return 4 * (x + w + y)
