"""Diagonal matrix times matrix: C = diag(a) @ B (the reference builds the dense N x N diagonal; the work is a row scaling)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Diagonal matrix times matrix"
KBENCH_SMALL = {"n": 128, "m": 96}

n = 4096
m = 6144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.diag(a) @ b


def get_inputs():
    return [torch.randn(n), torch.randn(n, m)]


def get_init_inputs():
    return []


def kbench_flops():
    # One multiply per output element: the dense product's zeros are not work.
    return n * m


def kbench_bytes():
    return 4 * (n + 2 * n * m)
