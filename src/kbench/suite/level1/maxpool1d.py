"""1-D max pooling, kernel 4, stride 2, padding 1, over long sequences of mixed-sign values."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "1-D max pooling"
KBENCH_SMALL = {"batch_size": 4, "channels": 16, "length": 1024}

batch_size = 64
channels = 128
length = 65536
kernel_size = 4
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [kernel_size, stride, padding]


def _outputs():
    return batch_size * channels * ((length + 2 * padding - kernel_size) // stride + 1)


def kbench_flops():
    return _outputs() * (kernel_size - 1)


def kbench_bytes():
    return 4 * (batch_size * channels * length + _outputs())
