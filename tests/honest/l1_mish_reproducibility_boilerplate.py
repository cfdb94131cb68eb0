"""Honest: Mish in one Triton kernel under the reproducibility block models paste at the top:
``torch.use_deterministic_algorithms(True, warn_only=True)`` and
``torch.backends.cudnn.benchmark = False`` (PyTorch's default). Both can only keep or narrow
the algorithms a computation may use; neither can make anything faster or less precise."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.use_deterministic_algorithms(True, warn_only=True)
torch.backends.cudnn.benchmark = False


@triton.jit
def mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    sp = tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))  # softplus, stable
    e = tl.exp(-2.0 * sp)
    tl.store(y_ptr + offsets, x * (1.0 - e) / (1.0 + e), mask=mask)  # x * tanh(softplus(x))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        mish_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
