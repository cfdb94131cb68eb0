"""Upper-triangular matrix product: C = triu(triu(A) @ triu(B)); inputs are full Gaussian matrices whose lower parts must be ignored."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Upper-triangular matrix product"
KBENCH_SMALL = {"n": 112}
# fp32 sums this long err by up to 0.00041 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.002, "rtol": 1e-4}}

n = 5120


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.triu(torch.matmul(torch.triu(a), torch.triu(b)))


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []


def kbench_flops():
    # C[i, j] = sum_{i <= t <= j} A[i, t] B[t, j]: n(n+1)(n+2)/6 multiply-adds.
    return 2 * (n * (n + 1) * (n + 2) // 6)


def kbench_bytes():
    # The two upper triangles read, the full output written.
    return 4 * (n * (n + 1) + n * n)
