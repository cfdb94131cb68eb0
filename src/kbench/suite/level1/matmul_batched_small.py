"""Batched product of many small 128x128 matrices: C[b] = A[b] @ B[b], a large batch of tiny GEMMs."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Batched small matrix product"
KBENCH_SMALL = {"batch_size": 64, "dim": 32}

batch_size = 16384
dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, dim, dim), torch.randn(batch_size, dim, dim)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * batch_size * dim * dim * dim


def kbench_bytes():
    return 4 * 3 * batch_size * dim * dim
