"""Honest: RMSNorm, one Triton program per row, with the module's constants annotated as a
TorchScript-minded model writes them: ``from torch.jit import Final`` and ``eps: Final[float]``.
``Final`` is a type annotation; nothing is scripted or compiled."""

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.jit import Final


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=0.0)
    rms = tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
    w = tl.load(w_ptr + offsets, mask=mask)
    tl.store(y_ptr + row * cols + offsets, x / rms * w, mask=mask)


class ModelNew(nn.Module):
    eps: Final[float]
    hidden: Final[int]

    def __init__(self, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.eps = 1e-6
        self.weight = nn.Parameter(torch.ones(hidden))
        with torch.no_grad():
            self.weight.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        rows = x.numel() // self.hidden
        rms_norm_kernel[(rows,)](x, self.weight, y, self.hidden, self.eps, BLOCK=triton.next_power_of_2(self.hidden))
        return y
