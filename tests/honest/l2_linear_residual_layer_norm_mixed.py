"""Honest, mixed: the projection with its bias by torch.addmm, the residual add left
in PyTorch, the LayerNorm in a Triton kernel (one program per row). Expected to carry
the torch-compute flag (the add)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    mask = c < cols
    x = tl.load(x_ptr + row * cols + c, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / cols + eps)
    w = tl.load(w_ptr + c, mask=mask)
    b = tl.load(b_ptr + c, mask=mask)
    tl.store(y_ptr + row * cols + c, d * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, inner: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(inner, hidden)
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        s = (residual + torch.addmm(self.proj.bias, h, self.proj.weight.t())).contiguous()
        y = torch.empty_like(s)
        cols = s.shape[-1]
        layer_norm_kernel[(s.numel() // cols,)](s, self.norm.weight, self.norm.bias, y, cols, self.norm.eps,
                                                BLOCK=triton.next_power_of_2(cols))
        return y
