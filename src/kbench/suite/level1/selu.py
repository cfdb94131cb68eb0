"""SELU on mixed-sign inputs of std 3."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "SELU"
KBENCH_SMALL = {"batch_size": 16, "dim": 4096}

batch_size = 16384
dim = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 5 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
