"""Softplus with beta = 2 and threshold = 10 on inputs of std 4 (about 10% of elements take the linear branch)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Softplus"
KBENCH_SMALL = {"batch_size": 16, "dim": 4096}

batch_size = 16384
dim = 32768
beta = 2.0
threshold = 10.0


class Model(nn.Module):
    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x, beta=self.beta, threshold=self.threshold)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4.0]


def get_init_inputs():
    return [beta, threshold]


def kbench_flops():
    return 6 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
