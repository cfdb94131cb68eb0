"""Honest, kernels only, a derived weight cached lazily, computed with arithmetic: on the
first call forward folds the scale into the weight and the bias (scale * W^T made
contiguous, scale * b) and keeps them, with the parameters' storage pointers and version
counters; later calls reuse them while those are unchanged. scale * clamp(z, low, high) is
clamp(scale * z, min(scale * low, scale * high), max(...)) for either sign of the scale, so
the kernel clamps the folded product. Only functions of the module's own parameters are
cached."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_clamp_kernel(x_ptr, wt_ptr, b_ptr, y_ptr, M, N, K, lo, hi,
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
    y = tl.minimum(tl.maximum(z, lo), hi)
    tl.store(y_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], y,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, low: float, high: float, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.low, self.high, self.scale = low, high, scale
        self._folded: tuple[torch.Tensor, torch.Tensor] | None = None
        self._folded_of: tuple | None = None

    def _folded_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        w, b = self.linear.weight, self.linear.bias
        key = (w.data_ptr(), w._version, b.data_ptr(), b._version, w.device, w.dtype)
        if self._folded is None or self._folded_of != key:
            self._folded = ((w.detach() * self.scale).t().contiguous(), b.detach() * self.scale)
            self._folded_of = key
        return self._folded

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        wt, b = self._folded_weights()
        M, K = x.shape
        N = wt.shape[1]
        lo, hi = sorted((self.low * self.scale, self.high * self.scale))
        y = torch.empty(M, N, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_clamp_kernel[grid](x, wt, b, y, M, N, K, lo, hi, BM=32, BN=32, BK=32)
        return y
