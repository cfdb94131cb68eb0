"""Batched matrix product (bmm): C[b] = A[b] @ B[b] for a batch of independent matrices."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Batched matrix product"
KBENCH_SMALL = {"batch_size": 4, "m": 64, "k": 96, "n": 80}
# fp32 sums this long err by up to 0.00028 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.002, "rtol": 1e-4}}

batch_size = 64
m = 1024
k = 1024
n = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * batch_size * m * n * k


def kbench_bytes():
    return 4 * batch_size * (m * k + k * n + m * n)
