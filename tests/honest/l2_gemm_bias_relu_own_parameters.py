"""Honest: matmul + bias + ReLU in one Triton kernel, with the parameters declared by hand
instead of an ``nn.Linear``: ``nn.Parameter(torch.empty(...))`` initialised as ``nn.Linear``
does (``kaiming_uniform_(a=sqrt(5))``), in the reference's order, so that the same seed gives
the same weights. Model answers that rebuild a layer from its parts write this."""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_bias_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        x = tl.load(x_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        # W is (N, K): the tile W.T[k, n]
        w = tl.load(w_ptr + offs_n[None, :] * K + ks[:, None], mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(x, w, acc, input_precision="ieee")
    acc += tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    tl.store(y_ptr + offs_m[:, None] * N + offs_n[None, :], tl.maximum(acc, 0.0),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_bias_relu_kernel[grid](x, self.weight, self.bias, y, M, N, K, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return y
