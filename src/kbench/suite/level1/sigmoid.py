"""Logistic sigmoid on mixed-sign inputs of std 4, so both saturated tails occur."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Sigmoid"
KBENCH_SMALL = {"batch_size": 8, "dim": 8192}

batch_size = 8192
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
