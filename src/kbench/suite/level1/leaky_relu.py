"""Leaky ReLU with a negative slope of 0.1 on mixed-sign inputs (std 2)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Leaky ReLU"
KBENCH_SMALL = {"batch_size": 16, "dim": 4096}

batch_size = 16384
dim = 32768
negative_slope = 0.1


class Model(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0]


def get_init_inputs():
    return [negative_slope]


def kbench_flops():
    return 2 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
