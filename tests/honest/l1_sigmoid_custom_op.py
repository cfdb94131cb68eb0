"""Honest: Sigmoid in one Triton kernel, registered as a PyTorch operator of its own with
``torch.library.custom_op`` (and a fake for tracing), as answers written to work with
torch.compile do; forward calls the operator."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, tl.sigmoid(x), mask=mask)


@torch.library.custom_op("kbench_honest_sigmoid::sigmoid", mutates_args=())
def sigmoid(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    sigmoid_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


@sigmoid.register_fake
def _(x):
    return torch.empty_like(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sigmoid(x)
