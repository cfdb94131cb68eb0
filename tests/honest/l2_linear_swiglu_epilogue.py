"""Honest, KernelBench style: the gate and up products by torch.mm, silu(gate) * up
fused in one Triton kernel."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def silu_mul_kernel(g_ptr, u_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    g = tl.load(g_ptr + idx, mask=mask)
    u = tl.load(u_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, g * tl.sigmoid(g) * u, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, intermediate: int):
        super().__init__()
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = torch.mm(x, self.gate.weight.t())
        u = torch.mm(x, self.up.weight.t())
        y = torch.empty_like(g)
        silu_mul_kernel[(triton.cdiv(g.numel(), 2048),)](g, u, y, g.numel(), BLOCK=2048)
        return y
