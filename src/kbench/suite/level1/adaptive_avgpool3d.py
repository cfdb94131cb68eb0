"""3-D adaptive average pooling from 64 x 128 x 128 to 8 x 12 x 12 (128 is not a multiple of 12; windows overlap)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "3-D adaptive average pooling"
KBENCH_SMALL = {
    "batch_size": 2,
    "channels": 8,
    "depth": 8,
    "height": 16,
    "width": 16,
    "output_d": 3,
    "output_hw": 5,
}

batch_size = 8
channels = 64
depth = 64
height = 128
width = 128
output_d = 8
output_hw = 12


class Model(nn.Module):
    def __init__(self, output_d: int, output_hw: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool3d((output_d, output_hw, output_hw))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [output_d, output_hw]


def kbench_flops():
    return batch_size * channels * (depth * height * width + output_d * output_hw * output_hw)


def kbench_bytes():
    return 4 * batch_size * channels * (depth * height * width + output_d * output_hw * output_hw)
