"""Lower-triangular matrix product: C = tril(tril(A) @ tril(B)); inputs are full Gaussian matrices whose upper parts must be ignored."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Lower-triangular matrix product"
KBENCH_SMALL = {"n": 128}
# fp32 sums this long err by up to 0.0004 (absolute) against float64 at the default size
# (H200, `kbench audit`, 2026-11-29; docs/audit.md): atol is about 4x that, rtol stays 1e-4.
KBENCH_TOLERANCE = {"float32": {"atol": 0.002, "rtol": 1e-4}}

n = 5120


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(torch.tril(a), torch.tril(b)))


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n)]


def get_init_inputs():
    return []


def kbench_flops():
    # C[i, j] = sum_{j <= t <= i} A[i, t] B[t, j]: n(n+1)(n+2)/6 multiply-adds.
    return 2 * (n * (n + 1) * (n + 2) // 6)


def kbench_bytes():
    # The two lower triangles read, the full output written.
    return 4 * (n * (n + 1) + n * n)
