"""GELU, tanh approximation, on transformer-shaped activations of std 3 (differs from erf GELU by more than the tolerance)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "GELU (tanh approximation)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 64, "hidden": 512}

batch_size = 32
seq_len = 8192
hidden = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 3.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 12 * batch_size * seq_len * hidden


def kbench_bytes():
    return 2 * 4 * batch_size * seq_len * hidden
