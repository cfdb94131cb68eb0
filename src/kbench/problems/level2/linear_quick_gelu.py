"""CLIP MLP input layer: Linear 1024 -> 4096, then QuickGELU x * sigmoid(1.702 x)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + QuickGELU"
KBENCH_SMALL = {"tokens": 32, "hidden": 64, "inner": 128}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

tokens = 16384
hidden = 1024
inner = 4096


class Model(nn.Module):
    def __init__(self, hidden: int, inner: int):
        super().__init__()
        self.fc = nn.Linear(hidden, inner)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        return h * torch.sigmoid(1.702 * h)


def get_inputs():
    return [torch.randn(tokens, hidden) * 2.0]


def get_init_inputs():
    return [hidden, inner]


def kbench_flops():
    return 2 * tokens * inner * hidden + 7 * tokens * inner


def kbench_bytes():
    return 4 * (tokens * hidden + inner * (hidden + 1) + tokens * inner)
