"""Hyperbolic tangent on a 4-D activation tensor of mixed-sign inputs (std 3)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Tanh"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "height": 64, "width": 64}

batch_size = 64
channels = 128
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 3.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 6 * batch_size * channels * height * width


def kbench_bytes():
    return 2 * 4 * batch_size * channels * height * width
