"""Tensor.index_add along dim 0 (an embedding-gradient accumulation) with int64 row indices; values are multiples of 1/1024 so sums are exact in fp32 in any order."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Index add"
KBENCH_SMALL = {"num_rows": 256, "dim": 64, "num_updates": 2048}

num_rows = 32768
dim = 2048
num_updates = 262144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return x.index_add(0, index, src)


def _dyadic(*shape):
    # randn rounded to a multiple of 2**-10: partial sums stay exact in fp32.
    return torch.round(torch.randn(*shape) * 1024.0) / 1024.0


def get_inputs():
    x = _dyadic(num_rows, dim)
    index = torch.randint(0, num_rows, (num_updates,), dtype=torch.int64)
    src = _dyadic(num_updates, dim)
    return [x, index, src]


def get_init_inputs():
    return []


def kbench_flops():
    return num_updates * dim


def kbench_bytes():
    return 2 * 4 * num_rows * dim + 8 * num_updates + 4 * num_updates * dim
