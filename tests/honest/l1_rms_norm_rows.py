"""Honest: RMSNorm in Triton, each program a block of rows held whole."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rows, cols, eps, BR: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.arange(0, BLOCK)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None].to(tl.int64) * cols + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / cols + eps)
    w = tl.load(w_ptr + c, mask=c < cols, other=0.0)
    tl.store(y_ptr + offs, x * rstd[:, None] * w[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        block = triton.next_power_of_2(cols)
        br = max(1, 4096 // block)
        y = torch.empty_like(x)
        rms_norm_kernel[(triton.cdiv(rows, br),)](x, self.norm.weight, y, rows, cols, self.norm.eps, BR=br, BLOCK=block)
        return y
