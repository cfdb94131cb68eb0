"""1-D max pooling with dilation 2 (kernel 3, stride 1, padding 1): each window spans 5 inputs, the output is 2 shorter."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "1-D max pooling, dilated"
KBENCH_SMALL = {"batch_size": 4, "channels": 16, "length": 1024}

batch_size = 64
channels = 128
length = 65536
kernel_size = 3
stride = 1
padding = 1
dilation = 2


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]


def _outputs():
    span = dilation * (kernel_size - 1) + 1
    return batch_size * channels * ((length + 2 * padding - span) // stride + 1)


def kbench_flops():
    return _outputs() * (kernel_size - 1)


def kbench_bytes():
    return 4 * (batch_size * channels * length + _outputs())
