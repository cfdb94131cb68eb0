"""Honest, kernels only, a derived weight cached lazily: on the first call forward makes
W^T contiguous and keeps it in an attribute, with the parameter's storage pointer, version
counter, device and dtype; a later call reuses it while those are unchanged and makes it
again otherwise (an optimiser step bumps the version, .to() moves the storage). Only a
function of the module's own parameter is cached, never anything of an input or an
output. The product, the bias and the ReLU in one Triton kernel."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gemm_bias_relu_kernel(x_ptr, wt_ptr, b_ptr, y_ptr, M, N, K,
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
    tl.store(y_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], tl.maximum(z, 0.0),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)
        self._weight_t: torch.Tensor | None = None
        self._weight_t_of: tuple | None = None

    def _transposed_weight(self) -> torch.Tensor:
        w = self.linear.weight
        key = (w.data_ptr(), w._version, w.device, w.dtype)
        if self._weight_t is None or self._weight_t_of != key:
            self._weight_t = w.detach().t().contiguous()
            self._weight_t_of = key
        return self._weight_t

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        wt = self._transposed_weight()
        M, K = x.shape
        N = wt.shape[1]
        y = torch.empty(M, N, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        gemm_bias_relu_kernel[grid](x, wt, self.bias, y, M, N, K, BM=32, BN=32, BK=32)
        return y
