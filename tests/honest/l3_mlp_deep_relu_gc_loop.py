"""Honest, KernelBench style at level 3: the layers held as blocks in ``self.gcs`` and walked
by a loop variable named ``gc`` (``gc.linear.weight``); each product by torch.mm, each bias
and ReLU in a Triton epilogue. The ``gc`` module is never imported."""

import itertools
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_act_kernel(z_ptr, b_ptr, y_ptr, n, cols, RELU: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    z = tl.load(z_ptr + idx, mask=mask) + tl.load(b_ptr + idx % cols, mask=mask)
    if RELU:
        z = tl.maximum(z, 0.0)
    tl.store(y_ptr + idx, z, mask=mask)


class GatedCell(nn.Module):
    """One layer of the stack: its weights; the product and epilogue run in ModelNew.forward."""

    def __init__(self, a: int, b: int):
        super().__init__()
        self.linear = nn.Linear(a, b)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_layers: int, num_classes: int):
        super().__init__()
        sizes = [in_features] + [hidden] * (num_layers - 1) + [num_classes]
        self.gcs = nn.ModuleList(GatedCell(a, b) for a, b in itertools.pairwise(sizes))
        for gc in self.gcs[:-1]:
            nn.init.kaiming_normal_(gc.linear.weight, nonlinearity="relu")
        nn.init.normal_(self.gcs[-1].linear.weight, std=1.0 / math.sqrt(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.gcs) - 1
        for i, gc in enumerate(self.gcs):
            z = torch.mm(x, gc.linear.weight.t())
            y = torch.empty_like(z)
            bias_act_kernel[(triton.cdiv(z.numel(), 2048),)](
                z, gc.linear.bias, y, z.numel(), z.shape[1], RELU=i < last, BLOCK=2048
            )
            x = y
        return x
