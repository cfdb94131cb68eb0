"""2-D adaptive average pooling from 256 x 256 to 7 x 7 (windows of 37-38 pixels that overlap; 256 is not a multiple of 7)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "2-D adaptive average pooling"
KBENCH_SMALL = {
    "batch_size": 4,
    "channels": 16,
    "height": 20,
    "width": 20,
    "output_h": 6,
    "output_w": 6,
}

batch_size = 32
channels = 256
height = 256
width = 256
output_h = 7
output_w = 7


class Model(nn.Module):
    def __init__(self, output_h: int, output_w: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d((output_h, output_w))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [output_h, output_w]


def kbench_flops():
    return batch_size * channels * (height * width + output_h * output_w)


def kbench_bytes():
    return 4 * batch_size * channels * (height * width + output_h * output_w)
