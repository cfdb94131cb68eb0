"""Matrix product with both operands transposed: C = A.T @ B.T, A stored as (K, M), B as (N, K)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Matrix product, A and B transposed"
KBENCH_SMALL = {"m": 128, "k": 96, "n": 112}
# fp32 sums this long err by up to 0.0011 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.005, "rtol": 1e-4}}

m = 4096
k = 4096
n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a.T, b.T)


def get_inputs():
    return [torch.randn(k, m), torch.randn(n, k)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * m * n * k


def kbench_bytes():
    return 4 * (k * m + n * k + m * n)
