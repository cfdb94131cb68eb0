"""Square matrix product C = A @ B with mixed-sign Gaussian entries."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Square matrix product"
KBENCH_SMALL = {"n": 128}

n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * n * n * n


def kbench_bytes():
    return 4 * 3 * n * n
