"""Honest: GELU (tanh approximation) in one Triton kernel whose launcher is decorated
``@torch.compiler.disable``, as models keep TorchDynamo from tracing into a Triton launch.
Nothing is compiled: the decorator only forbids compiling what it wraps."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_tanh_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh = 1.0 - 2.0 / (tl.exp(2.0 * inner) + 1.0)
    tl.store(y_ptr + offsets, 0.5 * x * (1.0 + tanh), mask=mask)


@torch.compiler.disable
def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    gelu_tanh_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gelu_tanh(x)
