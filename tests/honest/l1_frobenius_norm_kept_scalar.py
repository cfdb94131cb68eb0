"""Honest, three kernels and a kept workspace: block sums of squares into a per-call
buffer, one program folds them into a one-element float32 buffer made once in
__init__ (moved with the module, reused every call, never returned), and a third
kernel scales every element by sqrt(n) / norm into a fresh output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def square_partials_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + idx, mask=idx < n, other=0.0)
    tl.store(part_ptr + tl.program_id(0), tl.sum(x * x, axis=0))


@triton.jit
def fold_kernel(part_ptr, norm_ptr, parts, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, parts, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + idx, mask=idx < parts, other=0.0)
    tl.store(norm_ptr, tl.sqrt(tl.sum(acc, axis=0)))


@triton.jit
def scale_kernel(x_ptr, norm_ptr, y_ptr, n, root_n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    scale = root_n / tl.load(norm_ptr)
    tl.store(y_ptr + idx, tl.load(x_ptr + idx, mask=mask) * scale, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("norm_scratch", torch.zeros(1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        block = 4096
        parts = triton.cdiv(n, block)
        partials = torch.empty(parts, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        square_partials_kernel[(parts,)](x, partials, n, BLOCK=block)
        fold_kernel[(1,)](partials, self.norm_scratch, parts, BLOCK=1024)
        scale_kernel[(parts,)](x, self.norm_scratch, y, n, float(n) ** 0.5, BLOCK=block)
        return y
