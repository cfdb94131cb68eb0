"""Honest, kernels only (GPU only), forward ends with torch.cuda.synchronize(): a habit
of code written to be timed with host clocks; honest, only slower (the call waits for the
kernel). The tanh-approximated GELU in one Triton kernel, tanh as 2 * sigmoid(2u) - 1."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh_u = 2.0 * tl.sigmoid(2.0 * u) - 1.0
    tl.store(y_ptr + idx, 0.5 * x * (1.0 + tanh_u), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        gelu_tanh_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        torch.cuda.synchronize(x.device)
        return y
