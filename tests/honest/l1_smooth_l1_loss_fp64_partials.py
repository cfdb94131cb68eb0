"""Honest, kernels only, a float64 intermediate: the first kernel sums the smooth L1 terms
of its block in float32 and stores the block's sum as float64 in a per-call workspace; the
second, one program, adds the partial sums in float64, divides by the element count and
stores the mean as a one-element float32 output (0-dimensional, as the reference's)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def smooth_l1_partials_kernel(p_ptr, t_ptr, partial_ptr, n, beta, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    d = tl.abs(tl.load(p_ptr + idx, mask=mask, other=0.0) - tl.load(t_ptr + idx, mask=mask, other=0.0))
    term = tl.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    term = tl.where(mask, term, 0.0)
    tl.store(partial_ptr + pid, tl.sum(term, axis=0).to(tl.float64))


@triton.jit
def mean_of_partials_kernel(partial_ptr, y_ptr, n_partials, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    total = tl.zeros([BLOCK], tl.float64)
    for start in range(0, n_partials, BLOCK):
        total += tl.load(partial_ptr + start + offs, mask=start + offs < n_partials, other=0.0)
    mean = tl.sum(total, axis=0) / n
    tl.store(y_ptr, mean.to(tl.float32))


class ModelNew(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        p = predictions.contiguous()
        t = targets.contiguous()
        n = p.numel()
        block = 4096
        n_partials = triton.cdiv(n, block)
        partials = torch.empty(n_partials, device=p.device, dtype=torch.float64)
        smooth_l1_partials_kernel[(n_partials,)](p, t, partials, n, self.beta, BLOCK=block)
        y = torch.empty((), device=p.device, dtype=p.dtype)
        mean_of_partials_kernel[(1,)](partials, y, n_partials, n, BLOCK=1024)
        return y
