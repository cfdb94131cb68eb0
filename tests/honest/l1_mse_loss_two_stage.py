"""Honest, one-element output: the mean squared error in two stages, per-block partial
sums into a workspace allocated per call, then one program adds them and divides.
The output is a 0-dimensional tensor, as F.mse_loss returns."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def squared_error_partials_kernel(p_ptr, t_ptr, part_ptr, n, BLOCK: tl.constexpr, STEPS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], tl.float32)
    for step in range(0, STEPS):
        idx = (pid * STEPS + step) * BLOCK + tl.arange(0, BLOCK)
        mask = idx < n
        d = tl.load(p_ptr + idx, mask=mask, other=0.0) - tl.load(t_ptr + idx, mask=mask, other=0.0)
        acc += d * d
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def mean_kernel(part_ptr, out_ptr, parts, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, parts, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + idx, mask=idx < parts, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        p, t = predictions.contiguous(), targets.contiguous()
        n = p.numel()
        block, steps = 1024, 16
        parts = triton.cdiv(n, block * steps)
        partials = torch.empty(parts, device=p.device, dtype=torch.float32)
        out = torch.empty((), device=p.device, dtype=p.dtype)
        squared_error_partials_kernel[(parts,)](p, t, partials, n, BLOCK=block, STEPS=steps)
        mean_kernel[(1,)](partials, out, parts, n, BLOCK=1024)
        return out
