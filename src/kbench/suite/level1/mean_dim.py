"""Mean over the last dimension (1024 long) of a 3-D tensor whose rows have their own offsets."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Mean over a dimension"
KBENCH_SMALL = {"batch_size": 4, "rows": 64, "dim": 1024}

batch_size = 96
rows = 16384
dim = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, rows, dim)
    x.add_(torch.randn(batch_size, rows, 1) * 0.1)
    return [x]


def get_init_inputs():
    return []


def kbench_flops():
    return batch_size * rows * dim


def kbench_bytes():
    return 4 * (batch_size * rows * dim + batch_size * rows)
