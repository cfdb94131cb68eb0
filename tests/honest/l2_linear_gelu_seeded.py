"""Honest, KernelBench style, with the seeding habit of many answers: the random number
generators seeded when the file is imported, and again at the end of ``__init__`` "for
reproducibility". The judge seeds them itself before it builds a model or draws inputs, so
neither seed changes the weights (built before the second) or the inputs. x W^T by
torch.mm (cuBLAS), bias and exact GELU fused in a Triton kernel."""

import random

import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.manual_seed(42)
random.seed(42)
np.random.seed(42)


@triton.jit
def bias_gelu_kernel(z_ptr, b_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    z = tl.load(z_ptr + idx, mask=mask) + tl.load(b_ptr + idx % cols, mask=mask)
    tl.store(y_ptr + idx, 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        torch.manual_seed(0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.mm(x, self.linear.weight.t())
        y = torch.empty_like(z)
        bias_gelu_kernel[(triton.cdiv(z.numel(), 2048),)](z, self.linear.bias, y, z.numel(), z.shape[1], BLOCK=2048)
        return y
