"""Honest, one-element output accumulated with atomics: every program adds its block's
share of sum(t * (log t - log p)) / batch into a zero-initialised 0-dimensional output
(torch.zeros, then tl.atomic_add)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kl_div_atomic_kernel(logp_ptr, t_ptr, out_ptr, n, batch, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    logp = tl.load(logp_ptr + idx, mask=mask, other=0.0)
    t = tl.load(t_ptr + idx, mask=mask, other=0.0)
    safe_t = tl.where(t > 0, t, 1.0)
    term = tl.where((t > 0) & mask, t * (tl.log(safe_t) - logp), 0.0)
    tl.atomic_add(out_ptr, tl.sum(term, axis=0) / batch)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logp, t = log_predictions.contiguous(), targets.contiguous()
        out = torch.zeros((), device=logp.device, dtype=torch.float32)
        block = 8192
        grid = (triton.cdiv(logp.numel(), block),)
        kl_div_atomic_kernel[grid](logp, t, out, logp.numel(), logp.shape[0], BLOCK=block)
        return out
