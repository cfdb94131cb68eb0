"""Swish (SiLU) followed by a learned per-channel scale: x * sigmoid(x) * w."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Swish with channel scale"
KBENCH_SMALL = {"batch_size": 8, "channels": 512}

batch_size = 4096
channels = 65536


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) * self.weight


def get_inputs():
    return [torch.randn(batch_size, channels) * 4.0]


def get_init_inputs():
    return [channels]


def kbench_flops():
    return 5 * batch_size * channels


def kbench_bytes():
    return 4 * (2 * batch_size * channels + channels)
