"""Matrix product with a transposed right operand: C = A @ B.T, A stored as (M, K), B as (N, K)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Matrix product, B transposed"
KBENCH_SMALL = {"m": 96, "k": 144, "n": 128}
# fp32 sums this long err by up to 0.0016 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.007, "rtol": 1e-4}}

m = 3072
k = 6144
n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(m, k), torch.randn(n, k)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * m * n * k


def kbench_bytes():
    return 4 * (m * k + n * k + m * n)
