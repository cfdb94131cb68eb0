"""4-D tensor times matrix over the last axis: einsum("bijl,lk->bijk", A, B)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "4-D tensor times matrix (einsum)"
KBENCH_SMALL = {"b": 2, "i": 8, "j": 16, "l": 64, "k": 48}
# fp32 sums this long err by up to 0.00028 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.002, "rtol": 1e-4}}

b = 8
i = 32
j = 256
l = 1024
k = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bijl,lk->bijk", a, w)


def get_inputs():
    return [torch.randn(b, i, j, l), torch.randn(l, k)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * b * i * j * l * k


def kbench_bytes():
    return 4 * (b * i * j * l + l * k + b * i * j * k)
