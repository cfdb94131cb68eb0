"""GEGLU feed-forward input: one Linear to twice the width, split in halves, value half times GELU of the gate half."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GEGLU"
KBENCH_SMALL = {"tokens": 32, "dim": 64, "inner": 96}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

tokens = 4096
dim = 1280
inner = 5120


class Model(nn.Module):
    def __init__(self, dim: int, inner: int):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * inner)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        value, gate = self.proj(x).chunk(2, dim=-1)
        return value * F.gelu(gate)


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, inner]


def kbench_flops():
    return 2 * tokens * 2 * inner * dim + 10 * tokens * inner


def kbench_bytes():
    return 4 * (tokens * dim + 2 * inner * (dim + 1) + tokens * inner)
