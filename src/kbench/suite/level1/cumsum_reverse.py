"""Reverse (suffix) cumulative sum along rows of 4096: out[i] = sum of x[i:] (absolute tolerance 1e-3, as for cumsum)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Reverse cumulative sum"
KBENCH_SMALL = {"batch_size": 32, "length": 1024}
KBENCH_TOLERANCE = {"float32": {"atol": 1e-3, "rtol": 1e-4}}

batch_size = 131072
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(1), dim=1).flip(1)


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return []


def kbench_flops():
    return batch_size * length


def kbench_bytes():
    return 2 * 4 * batch_size * length
