"""Tall-skinny matrix product C = A @ B: many rows (M) times a block of few columns (N = 128)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Tall-skinny matrix product"
KBENCH_SMALL = {"m": 1024, "k": 128, "n": 16}
# fp32 sums this long err by up to 0.00061 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.003, "rtol": 1e-4}}

m = 131072
k = 2048
n = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * m * n * k


def kbench_bytes():
    return 4 * (m * k + k * n + m * n)
