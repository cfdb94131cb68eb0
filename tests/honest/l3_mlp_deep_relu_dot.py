"""Honest, kernels only at level 3: every layer of the 8-layer MLP is one Triton kernel
(tl.dot at fp32 precision, bias and ReLU on the accumulator), nothing computed by
PyTorch."""

import itertools
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, RELU: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(x_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        w = tl.load(w_ptr + cols[None, :] * K + k[:, None], mask=(cols[None, :] < N) & (k[:, None] < K), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0)[None, :]
    if RELU:
        acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_layers: int, num_classes: int):
        super().__init__()
        sizes = [in_features] + [hidden] * (num_layers - 1) + [num_classes]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        for layer in self.layers[:-1]:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
        nn.init.normal_(self.layers[-1].weight, std=1.0 / math.sqrt(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            w = layer.weight.contiguous()
            M, K = x.shape
            N = w.shape[0]
            y = torch.empty(M, N, device=x.device, dtype=x.dtype)
            grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
            linear_kernel[grid](x, w, layer.bias, y, M, N, K, RELU=i < last, BM=32, BN=32, BK=32)
            x = y
        return x
