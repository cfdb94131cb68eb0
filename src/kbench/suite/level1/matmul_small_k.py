"""Small-K matrix product (a rank-K outer-product update): C = A @ B with K = 128 and a large M x N output."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Small-K matrix product"
KBENCH_SMALL = {"m": 256, "n": 192, "k": 8}

m = 16384
n = 16384
k = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * m * n * k


def kbench_bytes():
    return 4 * (m * k + k * n + m * n)
