"""ReZero residual block: x + alpha * GELU(Linear(x)) with a learned scalar alpha."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GELU + scaled residual"
KBENCH_SMALL = {"batch_size": 32, "features": 64}
KBENCH_DTYPES = ("float32", "bfloat16")

batch_size = 4096
features = 4096


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.alpha = nn.Parameter(torch.tensor(0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.alpha * F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


def kbench_flops():
    return 2 * batch_size * features * features + 11 * batch_size * features


def kbench_bytes():
    return 4 * (2 * batch_size * features + features * (features + 1) + 1)
