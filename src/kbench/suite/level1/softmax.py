"""Row-wise softmax over the last dimension, inputs with a spread of +-10."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Softmax"
KBENCH_SMALL = {"batch_size": 64, "dim": 1000}

batch_size = 8192
dim = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
