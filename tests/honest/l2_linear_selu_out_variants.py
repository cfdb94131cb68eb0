"""Honest, KernelBench style, the common defensive idiom: forward makes its input
contiguous, allocates a fresh output and has PyTorch write the product into it through
an out= variant (torch.mm(..., out=y): cuBLAS on a GPU); one Triton kernel then adds the
bias and applies the SELU in place on that fresh buffer."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805


@triton.jit
def bias_selu_inplace_kernel(y_ptr, b_ptr, n, cols, alpha, scale, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    z = tl.load(y_ptr + idx, mask=mask) + tl.load(b_ptr + idx % cols, mask=mask)
    negative = alpha * (tl.exp(tl.minimum(z, 0.0)) - 1.0)
    tl.store(y_ptr + idx, scale * tl.where(z > 0.0, z, negative), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight = self.linear.weight.contiguous()
        y = torch.empty(x.shape[0], weight.shape[0], device=x.device, dtype=x.dtype)
        torch.mm(x, weight.t(), out=y)
        n = y.numel()
        bias_selu_inplace_kernel[(triton.cdiv(n, 2048),)](y, self.linear.bias, n, y.shape[1], SELU_ALPHA, SELU_SCALE,
                                                          BLOCK=2048)
        return y
