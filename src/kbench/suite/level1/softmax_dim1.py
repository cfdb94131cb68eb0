"""Softmax over the channel dimension (dim 1, strided in memory) of a (batch, 64, length) tensor, inputs of std 2."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Softmax over channels"
KBENCH_SMALL = {"batch_size": 4, "channels": 64, "length": 1024}

batch_size = 128
channels = 64
length = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 2.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * channels * length


def kbench_bytes():
    return 2 * 4 * batch_size * channels * length
