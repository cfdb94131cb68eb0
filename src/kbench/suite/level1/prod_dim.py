"""Product over the middle dimension (256 long, strided) of factors 1 + 0.02 * randn, so products stay of order 1."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Product over a dimension"
KBENCH_SMALL = {"batch_size": 4, "reduce_dim": 256, "dim": 256}

batch_size = 192
reduce_dim = 256
dim = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, reduce_dim, dim)
    x.mul_(0.02).add_(1.0)
    return [x]


def get_init_inputs():
    return []


def kbench_flops():
    return batch_size * reduce_dim * dim


def kbench_bytes():
    return 4 * (batch_size * reduce_dim * dim + batch_size * dim)
