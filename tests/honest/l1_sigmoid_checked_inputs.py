"""Honest: Sigmoid in one Triton kernel behind the input checks models write: a type check that
raises ``TypeError``, a dtype ``assert``, ``ValueError`` for an empty tensor, and the data
pointer's alignment (``x.data_ptr() % 16``) choosing whether the kernel may assume aligned
offsets (``tl.multiple_of``)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ALIGNED: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK
    offsets = start + tl.arange(0, BLOCK)
    if ALIGNED:
        offsets = tl.multiple_of(offsets, 4)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, 1.0 / (1.0 + tl.exp(-x)), mask=mask)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"expected a tensor, got {type(x).__name__}")
    assert x.dtype == torch.float32, f"float32 expected, got {x.dtype}"
    if x.numel() == 0:
        raise ValueError("empty input")
    x = x if x.is_contiguous() else x.contiguous()
    y = torch.empty_like(x)
    aligned = x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0
    n = x.numel()
    sigmoid_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, ALIGNED=aligned)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sigmoid(x)
