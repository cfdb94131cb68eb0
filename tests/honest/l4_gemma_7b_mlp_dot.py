"""Honest, kernels only at level 4: the Gemma MLP in two Triton kernels: the gate and up
products computed together in one tl.dot kernel with gelu_tanh(gate) * up applied on
the accumulators, then the down projection in a second tl.dot kernel. The module is
the reference's transformers GemmaMLP (same weights)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gate_up_kernel(x_ptr, wg_ptr, wu_ptr, h_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    g = tl.zeros((BM, BN), tl.float32)
    u = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(x_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        wmask = (cols[None, :] < N) & (k[:, None] < K)
        g += tl.dot(a, tl.load(wg_ptr + cols[None, :] * K + k[:, None], mask=wmask, other=0.0), input_precision="ieee")
        u += tl.dot(a, tl.load(wu_ptr + cols[None, :] * K + k[:, None], mask=wmask, other=0.0), input_precision="ieee")
    inner = 0.7978845608028654 * (g + 0.044715 * g * g * g)
    gelu = 0.5 * g * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    tl.store(h_ptr + rows[:, None] * N + cols[None, :], gelu * u, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def down_kernel(h_ptr, w_ptr, y_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(h_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        w = tl.load(w_ptr + cols[None, :] * K + k[:, None], mask=(cols[None, :] < N) & (k[:, None] < K), other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        from transformers import GemmaConfig
        from transformers.models.gemma.modeling_gemma import GemmaMLP

        config = GemmaConfig(
            hidden_size=hidden_size,
            intermediate_size=intermediate_size,
            hidden_act="gelu_pytorch_tanh",
            hidden_activation="gelu_pytorch_tanh",
        )
        self.mlp = GemmaMLP(config)
        with torch.no_grad():
            for p in self.mlp.parameters():
                p.normal_(0.0, p.shape[1] ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        M, K = x2.shape
        wg = self.mlp.gate_proj.weight.contiguous()
        wu = self.mlp.up_proj.weight.contiguous()
        wd = self.mlp.down_proj.weight.contiguous()
        inter = wg.shape[0]
        h = torch.empty(M, inter, device=x.device, dtype=x.dtype)
        gate_up_kernel[(triton.cdiv(M, 32), triton.cdiv(inter, 32))](x2, wg, wu, h, M, inter, K, BM=32, BN=32, BK=32)
        y = torch.empty(M, K, device=x.device, dtype=x.dtype)
        down_kernel[(triton.cdiv(M, 32), triton.cdiv(K, 32))](h, wd, y, M, K, inter, BM=32, BN=32, BK=32)
        return y.view(*shape[:-1], K)
