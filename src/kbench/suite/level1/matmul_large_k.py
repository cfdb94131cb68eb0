"""Large-K matrix product C = A @ B: a small 1024x1024 output reduced over K = 65536 (unscaled, so outputs grow like sqrt(K))."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Large-K matrix product"
KBENCH_SMALL = {"m": 64, "n": 64, "k": 4096}
# fp32 sums this long err by up to 0.0043 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.02, "rtol": 1e-4}}

m = 1024
n = 1024
k = 65536


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
