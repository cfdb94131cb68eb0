"""Row-wise log-softmax over the last dimension, inputs with a spread of +-10."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Log-softmax"
KBENCH_SMALL = {"batch_size": 32, "dim": 2000}

batch_size = 16384
dim = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
