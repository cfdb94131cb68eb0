"""L2 normalisation of 256-wide feature vectors (last dimension), each vector with its own scale."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "L2 normalisation"
KBENCH_SMALL = {"batch_size": 4, "tokens": 256, "dim": 256}

batch_size = 64
tokens = 32768
dim = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=2.0, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, tokens, dim)
    x.mul_(torch.rand(batch_size, tokens, 1) * 10.0 + 0.1)
    return [x]


def get_init_inputs():
    return []


def kbench_flops():
    return 3 * batch_size * tokens * dim


def kbench_bytes():
    return 2 * 4 * batch_size * tokens * dim
