"""Matrix-vector product y = A @ x with A of shape (M, K) and x of shape (K, 1); bound by reading A."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Matrix-vector product"
KBENCH_SMALL = {"m": 256, "k": 1024}
# fp32 sums of 32768 products err by up to 1.5e-4 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29): 0.57 of atol 1e-4, and an honest row-dot Triton kernel failed
# it by one element (benchmarks/false_positives.py, 2026-12-01). atol is about 6x the error.
KBENCH_TOLERANCE = {"float32": {"atol": 0.001, "rtol": 1e-4}}

m = 49152
k = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, 1)]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * m * k


def kbench_bytes():
    return 4 * (m * k + k + m)
