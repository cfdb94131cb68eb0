"""Honest: the answer begins with a copy of the reference program, as KernelBench's prompt
shows it (its sizes, ``Model``, ``get_inputs``, ``get_init_inputs``), and then defines
``ModelNew``, which never uses any of it: SELU in one Triton kernel."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

batch_size = 16384
dim = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0]


def get_init_inputs():
    return []


ALPHA = 1.6732632423543772848170429916717
SCALE = 1.0507009873554804934193349852946


@triton.jit
def selu_kernel(x_ptr, y_ptr, n, alpha, scale, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    y = tl.where(x > 0, x, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0))
    tl.store(y_ptr + idx, scale * y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        selu_kernel[(triton.cdiv(n, 1024),)](x, y, n, ALPHA, SCALE, BLOCK=1024)
        return y
