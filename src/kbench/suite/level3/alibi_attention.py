"""Causal self-attention with ALiBi: no position embedding; each head adds a linear penalty (its own slope) proportional to the query-key distance."""

import math

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Causal attention with ALiBi biases"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "d_model": 32, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.025 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.06}}

batch_size = 8
seq_len = 1024
d_model = 1024
num_heads = 16


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.o = nn.Linear(d_model, d_model)
        # Query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform.
        nn.init.normal_(self.qkv.weight, std=d_model ** -0.5)
        nn.init.normal_(self.o.weight, std=d_model ** -0.5)
        with torch.no_grad():
            self.qkv.weight[: 2 * d_model].mul_(1.5)
        # Geometric slopes 2^(-8 i / heads), i = 1..heads, as in the ALiBi paper.
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / num_heads) for i in range(num_heads)])
        self.register_buffer("slopes", slopes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.num_heads
        q, k, v = self.qkv(x).view(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)
        pos = torch.arange(s, device=x.device)
        dist = (pos[None, :] - pos[:, None]).to(x.dtype)  # key minus query: <= 0 where allowed
        scores = scores + self.slopes[:, None, None] * dist
        scores = scores.masked_fill(dist > 0, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.o((weights @ v).transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads]


def kbench_flops():
    n = batch_size * seq_len
    causal = seq_len * (seq_len + 1) // 2
    return 2 * n * 4 * d_model * d_model + 4 * batch_size * causal * d_model + 7 * batch_size * num_heads * causal


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * d_model + 4 * d_model * d_model + 4 * d_model + num_heads)
