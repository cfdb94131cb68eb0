"""Rectangular matrix product C = A @ B with A of shape (M, K) and B of shape (K, N), M != K != N."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Rectangular matrix product"
KBENCH_SMALL = {"m": 96, "k": 160, "n": 64}
# fp32 sums this long err by up to 0.001 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.005, "rtol": 1e-4}}

m = 6144
k = 4096
n = 2816


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
