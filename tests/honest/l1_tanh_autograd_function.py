"""Honest: Tanh in one Triton kernel wrapped in a ``torch.autograd.Function`` (forward saves its
output for a backward written in PyTorch), called through ``.apply`` as models write a kernel
they mean to train with. The judge calls forward under no_grad; the Function is only the
wrapper the kernel goes through."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    # tanh(x) = 1 - 2 / (exp(2x) + 1): exact at both ends, exp overflowing to inf gives 1
    y = 1.0 - 2.0 / (tl.exp(2.0 * x) + 1.0)
    tl.store(y_ptr + offsets, y, mask=mask)


class TritonTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        tanh_kernel[(triton.cdiv(n, 2048),)](x, y, n, BLOCK=2048)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return grad_output * (1.0 - y * y)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return TritonTanh.apply(x)
