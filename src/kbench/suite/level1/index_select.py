"""torch.index_select of columns (dim 1) with a shared int64 index vector, repeats allowed (twice as many picks as columns)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Index select"
KBENCH_SMALL = {"batch_size": 64, "dim": 1024, "num_indices": 2048}

batch_size = 8192
dim = 32768
num_indices = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 1, index)


def get_inputs():
    x = torch.randn(batch_size, dim)
    index = torch.randint(0, dim, (num_indices,), dtype=torch.int64)
    return [x, index]


def get_init_inputs():
    return []


def kbench_flops():
    return 0


def kbench_bytes():
    # With twice as many random picks as columns, nearly every 32-byte sector
    # of x holds a picked column, so x is read in full.
    return 4 * batch_size * dim + 8 * num_indices + 4 * batch_size * num_indices
