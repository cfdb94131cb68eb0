"""Honest: Mish in one Triton kernel, under the boilerplate many answers carry from their
CUDA habits: the build's environment variables set at import (TORCH_CUDA_ARCH_LIST, MAX_JOBS,
CUDA_HOME, CUDA_LAUNCH_BLOCKING for debugging), though nothing here is built by nvcc."""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
os.environ["MAX_JOBS"] = "4"
os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
os.environ.update({"CUDA_LAUNCH_BLOCKING": "0"})


@triton.jit
def mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    softplus = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))
    e = tl.exp(-2.0 * softplus)
    tl.store(y_ptr + idx, x * (1.0 - e) / (1.0 + e), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        mish_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
