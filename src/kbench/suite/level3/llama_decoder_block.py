"""Llama-style decoder block: RMSNorm, rotary position embedding, causal grouped-query attention, SwiGLU feed-forward, residuals."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Llama-style decoder block (RoPE, GQA, SwiGLU)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 16, "d_model": 64, "num_heads": 4, "num_kv_heads": 2, "d_ff": 96}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.023 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.06}}

batch_size = 2
seq_len = 1024
d_model = 2048
num_heads = 16
num_kv_heads = 4
d_ff = 5632
rope_base = 10000.0


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int, d_ff: int):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = d_model // num_heads
        self.attn_norm = RMSNorm(d_model)
        self.q = nn.Linear(d_model, num_heads * self.head_dim, bias=False)
        self.k = nn.Linear(d_model, num_kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(d_model, num_kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(num_heads * self.head_dim, d_model, bias=False)
        self.mlp_norm = RMSNorm(d_model)
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)
        for lin in (self.q, self.k, self.v, self.gate, self.up):
            nn.init.normal_(lin.weight, std=d_model ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        hd = self.head_dim
        # Rotary angles in at least float32, as real implementations compute them.
        acc = torch.promote_types(x.dtype, torch.float32)
        inv_freq = rope_base ** (-torch.arange(0, hd, 2, dtype=acc, device=x.device) / hd)
        angles = torch.arange(s, dtype=acc, device=x.device)[:, None] * inv_freq[None, :]
        angles = torch.cat([angles, angles], dim=-1)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)

        h = self.attn_norm(x)
        q = rotate(self.q(h).view(b, s, self.num_heads, hd).transpose(1, 2), cos, sin)
        k = rotate(self.k(h).view(b, s, self.num_kv_heads, hd).transpose(1, 2), cos, sin)
        v = self.v(h).view(b, s, self.num_kv_heads, hd).transpose(1, 2)
        groups = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(att.transpose(1, 2).reshape(b, s, -1))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, num_kv_heads, d_ff]


def kbench_flops():
    n = batch_size * seq_len
    hd = d_model // num_heads
    proj = 2 * n * d_model * (2 * num_heads * hd + 2 * num_kv_heads * hd)
    attn = 4 * batch_size * num_heads * seq_len * seq_len * hd + 5 * batch_size * num_heads * seq_len * seq_len
    mlp = 2 * 3 * n * d_model * d_ff + 6 * n * d_ff
    return proj + attn + mlp + 20 * n * d_model


def kbench_bytes():
    hd = d_model // num_heads
    params = d_model * (2 * num_heads * hd + 2 * num_kv_heads * hd) + 3 * d_model * d_ff + 2 * d_model
    return 4 * (2 * batch_size * seq_len * d_model + params)
