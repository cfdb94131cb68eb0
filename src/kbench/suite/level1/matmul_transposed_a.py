"""Matrix product with a transposed left operand: C = A.T @ B, A stored as (K, M), B as (K, N)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Matrix product, A transposed"
KBENCH_SMALL = {"m": 112, "k": 128, "n": 96}
# fp32 sums this long err by up to 0.00095 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.004, "rtol": 1e-4}}

m = 4096
k = 6144
n = 3072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.T, b)


def get_inputs():
    return [torch.randn(k, m), torch.randn(k, n)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * m * n * k


def kbench_bytes():
    return 4 * (k * m + k * n + m * n)
