"""torch.gather along dim 1 with int64 indices (16 gathers per source element on average)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Gather along a dimension"
KBENCH_SMALL = {"batch_size": 64, "dim": 256, "num_indices": 1024}

batch_size = 8192
dim = 2048
num_indices = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


def get_inputs():
    x = torch.randn(batch_size, dim)
    index = torch.randint(0, dim, (batch_size, num_indices), dtype=torch.int64)
    return [x, index]


def get_init_inputs():
    return []


def kbench_flops():
    return 0


def kbench_bytes():
    return 4 * batch_size * dim + 8 * batch_size * num_indices + 4 * batch_size * num_indices
