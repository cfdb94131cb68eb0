"""3-D max pooling, 3x3x3 window, stride 2, padding 1: halves every spatial size."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "3-D max pooling"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "depth": 8, "height": 16, "width": 16}

batch_size = 8
channels = 64
depth = 64
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


def _outputs():
    def out(size):
        return (size + 2 * padding - kernel_size) // stride + 1

    return batch_size * channels * out(depth) * out(height) * out(width)


def kbench_flops():
    return _outputs() * (kernel_size**3 - 1)


def kbench_bytes():
    return 4 * (batch_size * channels * depth * height * width + _outputs())
