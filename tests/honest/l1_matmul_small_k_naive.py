"""Honest, deliberately naive: C = A @ B with one program per 8 rows of C, built as K
outer-product updates (no shared-memory tiles, no tl.dot, scalar FMAs only): correct
and many times slower than cuBLAS."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_rows_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rows.to(tl.int64) * K + k, mask=rows < M, other=0.0)
        b = tl.load(b_ptr + k * N + cols, mask=cols < N, other=0.0)
        acc += a[:, None] * b[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty(M, N, device=a.device, dtype=a.dtype)
        matmul_rows_kernel[(triton.cdiv(M, 8), triton.cdiv(N, 256))](a, b, c, M, N, K, BM=8, BN=256)
        return c
