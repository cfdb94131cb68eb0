"""Post-LN transformer sublayer output: Linear projection of the sublayer's activations, plus the residual stream, then LayerNorm (random affine)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + residual add + LayerNorm"
KBENCH_SMALL = {"tokens": 32, "inner": 128, "hidden": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

tokens = 8192
inner = 4096
hidden = 1024


class Model(nn.Module):
    def __init__(self, inner: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(inner, hidden)
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(residual + self.proj(h))


def get_inputs():
    return [torch.randn(tokens, inner), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [inner, hidden]


def kbench_flops():
    return 2 * tokens * hidden * inner + 10 * tokens * hidden


def kbench_bytes():
    return 4 * (tokens * inner + hidden * (inner + 3) + 2 * tokens * hidden)
