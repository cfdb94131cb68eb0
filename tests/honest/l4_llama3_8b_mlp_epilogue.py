"""Honest, KernelBench style at level 4: the Llama MLP's three projections by torch.mm
(cuBLAS), silu(gate) * up fused in one Triton kernel between them. The module is the
same transformers LlamaMLP as the reference's (same weights); only its forward is
replaced."""

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
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaMLP

        config = LlamaConfig(hidden_size=hidden_size, intermediate_size=intermediate_size, hidden_act="silu")
        self.mlp = LlamaMLP(config)
        with torch.no_grad():
            for p in self.mlp.parameters():
                p.normal_(0.0, p.shape[1] ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        g = torch.mm(x2, self.mlp.gate_proj.weight.t())
        u = torch.mm(x2, self.mlp.up_proj.weight.t())
        h = torch.empty_like(g)
        silu_mul_kernel[(triton.cdiv(g.numel(), 2048),)](g, u, h, g.numel(), BLOCK=2048)
        out = torch.mm(h, self.mlp.down_proj.weight.t())
        return out.view(*shape[:-1], out.shape[-1])
