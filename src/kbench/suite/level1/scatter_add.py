"""Tensor.scatter_add along dim 1 with int64 indices; values are multiples of 1/1024 so sums are exact in fp32 whatever the order of the atomic adds."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Scatter add"
KBENCH_SMALL = {"batch_size": 64, "dim": 256, "num_updates": 1024}

batch_size = 8192
dim = 8192
num_updates = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.scatter_add(1, index, src)


def _dyadic(*shape):
    # randn rounded to a multiple of 2**-10: partial sums stay exact in fp32.
    return torch.round(torch.randn(*shape) * 1024.0) / 1024.0


def get_inputs():
    x = _dyadic(batch_size, dim)
    index = torch.randint(0, dim, (batch_size, num_updates), dtype=torch.int64)
    src = _dyadic(batch_size, num_updates)
    return [x, index, src]


def get_init_inputs():
    return []


def kbench_flops():
    return batch_size * num_updates


def kbench_bytes():
    return 2 * 4 * batch_size * dim + (8 + 4) * batch_size * num_updates
