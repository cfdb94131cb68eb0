"""Mish x * tanh(softplus(x)) on a 4-D activation tensor of mixed-sign inputs (std 4)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Mish"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "height": 32, "width": 64}

batch_size = 32
channels = 256
height = 256
width = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.mish(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 4.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 12 * batch_size * channels * height * width


def kbench_bytes():
    return 2 * 4 * batch_size * channels * height * width
