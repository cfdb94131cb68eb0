"""Honest: LayerNorm over the last dimension in one Triton kernel (a row per program, the
module's own weight and bias), launched inside ``torch.profiler.record_function`` as models
label their kernels for a profiler; no profiler runs, the label costs nothing."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, centred * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden))
            self.norm.bias.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.profiler.record_function("triton::layer_norm"):
            x = x.contiguous()
            hidden = x.shape[-1]
            y = torch.empty_like(x)
            layer_norm_kernel[(x.numel() // hidden,)](x, self.norm.weight, self.norm.bias, y, hidden,
                                                      self.norm.eps, BLOCK=triton.next_power_of_2(hidden))
            return y
