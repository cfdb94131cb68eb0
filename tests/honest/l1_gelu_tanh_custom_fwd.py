"""Honest: tanh-approximated GELU in one Triton kernel inside a ``torch.autograd.Function``
whose forward is decorated ``torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)``,
as models write kernels meant to be safe under mixed precision: it casts up to float32 (and
only inside an autocast region), never down."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
    tl.store(y_ptr + idx, 0.5 * x * (1.0 + tanh), mask=mask)


class GeluTanh(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        gelu_tanh_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return GeluTanh.apply(x)
