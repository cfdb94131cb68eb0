"""Honest, KernelBench style at level 3: each of the 8 layers' products by torch.mm
(cuBLAS), each layer's bias and ReLU (bias only for the last) in a Triton epilogue:
16 launches per forward."""

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


class ModelNew(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_layers: int, num_classes: int):
        super().__init__()
        sizes = [in_features] + [hidden] * (num_layers - 1) + [num_classes]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        for layer in self.layers[:-1]:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
        nn.init.normal_(self.layers[-1].weight, std=1.0 / math.sqrt(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            z = torch.mm(x, layer.weight.t())
            y = torch.empty_like(z)
            bias_act_kernel[(triton.cdiv(z.numel(), 2048),)](
                z, layer.bias, y, z.numel(), z.shape[1], RELU=i < last, BLOCK=2048
            )
            x = y
        return x
