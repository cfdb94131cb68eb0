"""Honest: matrix-vector product, each program a block of 16 rows reducing along K in
chunks; the (M, 1) output shape kept as torch.matmul gives it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    acc = tl.zeros([BM], tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None].to(tl.int64) * K + k[None, :],
                    mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        x = tl.load(x_ptr + k, mask=k < K, other=0.0)
        acc += tl.sum(a * x[None, :], axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < M)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        a, x = a.contiguous(), x.contiguous()
        M, K = a.shape
        y = torch.empty(M, 1, device=a.device, dtype=a.dtype)
        matvec_kernel[(triton.cdiv(M, 16),)](a, x, y, M, K, BM=16, BK=512)
        return y
