"""Honest, kernels only, forward running under torch.inference_mode() (the output is an
inference tensor: no version counter, no autograd metadata): the ELU in one Triton kernel
over the flattened input."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def elu_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    negative = alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0)
    tl.store(y_ptr + idx, tl.where(x > 0.0, x, negative), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            x = x.contiguous()
            y = torch.empty_like(x)
            n = x.numel()
            elu_kernel[(triton.cdiv(n, 4096),)](x, y, n, self.alpha, BLOCK=4096)
        return y
