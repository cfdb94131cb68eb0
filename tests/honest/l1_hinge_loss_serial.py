"""Honest, slow and one-element output: the hinge loss mean(clamp(1 - p * t, 0)) summed
by a single Triton program that walks both inputs end to end (a serial reduction:
one launch, one program, tens of times slower than eager at the default size)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hinge_serial_kernel(p_ptr, t_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        mask = idx < n
        p = tl.load(p_ptr + idx, mask=mask, other=0.0)
        t = tl.load(t_ptr + idx, mask=mask, other=0.0)
        acc += tl.where(mask, tl.maximum(1.0 - p * t, 0.0), 0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        p, t = predictions.contiguous(), targets.contiguous()
        out = torch.empty((), device=p.device, dtype=p.dtype)
        hinge_serial_kernel[(1,)](p, t, out, p.numel(), BLOCK=2048)
        return out
