"""Hardtanh clamping to [-1, 1] on inputs of std 2, so about 31% of the elements lie beyond each bound."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Hardtanh"
KBENCH_SMALL = {"batch_size": 16, "dim": 4096}

batch_size = 16384
dim = 32768
min_val = -1.0
max_val = 1.0


class Model(nn.Module):
    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=self.min_val, max_val=self.max_val)


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0]


def get_init_inputs():
    return [min_val, max_val]


def kbench_flops():
    return 2 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
