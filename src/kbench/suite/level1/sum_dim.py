"""Sum over the middle dimension (512 long, strided in memory) of a 3-D tensor."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Sum over a dimension"
KBENCH_SMALL = {"batch_size": 4, "reduce_dim": 256, "dim": 256}

batch_size = 1536
reduce_dim = 512
dim = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, reduce_dim, dim)]


def get_init_inputs():
    return []


def kbench_flops():
    return batch_size * reduce_dim * dim


def kbench_bytes():
    return 4 * (batch_size * reduce_dim * dim + batch_size * dim)
