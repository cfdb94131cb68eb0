"""Honest: LayerNorm over the last dimension in Triton, each program a block of rows
held whole (mean, variance, then normalise with the affine parameters)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, rows, cols, eps, BR: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.arange(0, BLOCK)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None].to(tl.int64) * cols + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.sum(x, axis=1) / cols
    d = tl.where(mask, x - mean[:, None], 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=1) / cols + eps)
    w = tl.load(w_ptr + c, mask=c < cols, other=0.0)
    b = tl.load(b_ptr + c, mask=c < cols, other=0.0)
    tl.store(y_ptr + offs, d * rstd[:, None] * w[None, :] + b[None, :], mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden))
            self.norm.bias.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        cols = x.shape[-1]
        rows = x.numel() // cols
        block = triton.next_power_of_2(cols)
        br = max(1, 4096 // block)
        y = torch.empty_like(x)
        layer_norm_kernel[(triton.cdiv(rows, br),)](x, self.norm.weight, self.norm.bias, y, rows, cols, self.norm.eps,
                                                    BR=br, BLOCK=block)
        return y
