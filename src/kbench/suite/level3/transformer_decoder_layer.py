"""Pre-norm transformer decoder layer written out: causal self-attention, cross-attention to an encoder memory, ReLU feed-forward."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Transformer decoder layer (self- and cross-attention)"
KBENCH_SMALL = {"batch_size": 2, "tgt_len": 16, "src_len": 24, "d_model": 32, "num_heads": 4, "d_ff": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.01 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.03, "rtol": 0.03}}

batch_size = 16
tgt_len = 512
src_len = 512
d_model = 1024
num_heads = 16
d_ff = 4096


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class Attention(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        for lin in (self.q, self.k):
            nn.init.normal_(lin.weight, std=d_model ** -0.5)

    def forward(self, x: torch.Tensor, context: torch.Tensor, causal: bool) -> torch.Tensor:
        b, t, d = x.shape
        s, h = context.shape[1], self.num_heads
        q = self.q(x).view(b, t, h, d // h).transpose(1, 2)
        k = self.k(context).view(b, s, h, d // h).transpose(1, 2)
        v = self.v(context).view(b, s, h, d // h).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)
        if causal:
            future = torch.ones(t, s, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o(out.transpose(1, 2).reshape(b, t, d))


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int):
        super().__init__()
        self.norm1 = random_norm(nn.LayerNorm(d_model))
        self.self_attn = Attention(d_model, num_heads)
        self.norm2 = random_norm(nn.LayerNorm(d_model))
        self.cross_attn = Attention(d_model, num_heads)
        self.norm3 = random_norm(nn.LayerNorm(d_model))
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, tgt: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        h = self.norm1(tgt)
        x = tgt + self.self_attn(h, h, causal=True)
        x = x + self.cross_attn(self.norm2(x), memory, causal=False)
        return x + self.fc2(F.relu(self.fc1(self.norm3(x))))


def get_inputs():
    return [torch.randn(batch_size, tgt_len, d_model), torch.randn(batch_size, src_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, d_ff]


def kbench_flops():
    nt, ns = batch_size * tgt_len, batch_size * src_len
    proj = 2 * d_model * d_model * (4 * nt + 2 * nt + 2 * ns)
    attn = 4 * batch_size * tgt_len * d_model * (tgt_len + src_len) + 5 * batch_size * num_heads * tgt_len * (tgt_len + src_len)
    ffn = 2 * 2 * nt * d_model * d_ff + nt * d_ff
    return proj + attn + ffn + 30 * nt * d_model


def kbench_bytes():
    params = 8 * d_model * d_model + 2 * d_model * d_ff + 15 * d_model + d_ff
    return 4 * (batch_size * d_model * (2 * tgt_len + src_len) + params)
