"""Self-normalising network layer: Linear, then SELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + SELU"
KBENCH_SMALL = {"batch_size": 32, "in_features": 64, "out_features": 128}
KBENCH_DTYPES = ("float32", "bfloat16")

batch_size = 8192
in_features = 2048
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.selu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def kbench_flops():
    return 2 * batch_size * out_features * in_features + 6 * batch_size * out_features


def kbench_bytes():
    return 4 * (
        batch_size * in_features + out_features * (in_features + 1) + batch_size * out_features
    )
