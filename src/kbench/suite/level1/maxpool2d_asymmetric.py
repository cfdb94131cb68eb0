"""2-D max pooling with a 2x4 window, stride (1, 2), padding (1, 2), on wide non-square images (128 x 512)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D max pooling, asymmetric window"
KBENCH_SMALL = {"batch_size": 4, "channels": 8, "height": 16, "width": 48}

batch_size = 32
channels = 256
height = 128
width = 512
kernel_h = 2
kernel_w = 4
stride_h = 1
stride_w = 2
padding_h = 1
padding_w = 2


class Model(nn.Module):
    def __init__(self, kernel, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(tuple(kernel), stride=tuple(stride), padding=tuple(padding))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [[kernel_h, kernel_w], [stride_h, stride_w], [padding_h, padding_w]]


def _outputs():
    oh = (height + 2 * padding_h - kernel_h) // stride_h + 1
    ow = (width + 2 * padding_w - kernel_w) // stride_w + 1
    return batch_size * channels * oh * ow


def kbench_flops():
    return _outputs() * (kernel_h * kernel_w - 1)


def kbench_bytes():
    return 4 * (batch_size * channels * height * width + _outputs())
