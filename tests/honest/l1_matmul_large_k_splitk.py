"""Honest, split-K with a workspace kept between calls: each program multiplies one
tile of C over one slice of K into a (splits, M, N) float32 buffer made on the first
call and reused by every later one; a second kernel adds the slices into a fresh C."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

SPLITS = 8


@triton.jit
def splitk_kernel(a_ptr, b_ptr, ws_ptr, M, N, K, k_per_split,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    split = tl.program_id(2)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    k_start = split * k_per_split
    for k0 in range(0, k_per_split, BK):
        k = (k_start + k0 + ks).to(tl.int64)
        kmask = (k0 + ks < k_per_split) & (k < K)
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & kmask[None, :], other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :], mask=kmask[:, None] & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    out = ws_ptr + split * M * N + rows[:, None] * N + cols[None, :]
    tl.store(out, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def reduce_splits_kernel(ws_ptr, c_ptr, MN, SPLITS_: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < MN
    acc = tl.zeros([BLOCK], tl.float32)
    for s in range(0, SPLITS_):
        acc += tl.load(ws_ptr + s * MN + idx, mask=mask, other=0.0)
    tl.store(c_ptr + idx, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._workspace = None

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        M, K = a.shape
        N = b.shape[1]
        shape = (SPLITS, M, N)
        if self._workspace is None or tuple(self._workspace.shape) != shape or self._workspace.device != a.device:
            self._workspace = torch.empty(shape, device=a.device, dtype=torch.float32)
        k_per_split = triton.cdiv(K, SPLITS)
        splitk_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32), SPLITS)](
            a, b, self._workspace, M, N, K, k_per_split, BM=32, BN=32, BK=64
        )
        c = torch.empty(M, N, device=a.device, dtype=a.dtype)
        reduce_splits_kernel[(triton.cdiv(M * N, 1024),)](self._workspace, c, M * N, SPLITS_=SPLITS, BLOCK=1024)
        return c
