"""2-D average pooling, 3x3 window, stride 1, padding 1 (zero padding counted): a box blur keeping the size."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D average pooling"
KBENCH_SMALL = {"batch_size": 4, "channels": 8, "height": 32, "width": 32}

batch_size = 32
channels = 256
height = 256
width = 256
kernel_size = 3
stride = 1
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


def _outputs():
    oh = (height + 2 * padding - kernel_size) // stride + 1
    ow = (width + 2 * padding - kernel_size) // stride + 1
    return batch_size * channels * oh * ow


def kbench_flops():
    return _outputs() * kernel_size * kernel_size


def kbench_bytes():
    return 4 * (batch_size * channels * height * width + _outputs())
