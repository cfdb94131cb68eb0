"""Causal sliding-window self-attention: each query sees only the previous `window` keys (band mask on the full score matrix), with Q/K/V/O projections."""

import math

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Sliding-window causal attention"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 64, "d_model": 32, "num_heads": 4, "window": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.025 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.06}}

batch_size = 4
seq_len = 2048
d_model = 1024
num_heads = 16
window = 256


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, window: int):
        super().__init__()
        self.num_heads, self.window = num_heads, window
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.o = nn.Linear(d_model, d_model)
        # Query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform.
        nn.init.normal_(self.qkv.weight, std=d_model ** -0.5)
        nn.init.normal_(self.o.weight, std=d_model ** -0.5)
        with torch.no_grad():
            self.qkv.weight[: 2 * d_model].mul_(1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.num_heads
        q, k, v = self.qkv(x).view(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)
        pos = torch.arange(s, device=x.device)
        dist = pos[:, None] - pos[None, :]  # query index minus key index
        outside = (dist < 0) | (dist >= self.window)
        weights = torch.softmax(scores.masked_fill(outside, float("-inf")), dim=-1)
        return self.o((weights @ v).transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, window]


def kbench_flops():
    # the scores a kernel must compute: `window` keys per query (fewer at the start)
    n = batch_size * seq_len
    keys = sum(min(i + 1, window) for i in range(seq_len))
    return 2 * n * 4 * d_model * d_model + 4 * batch_size * keys * d_model + 5 * batch_size * num_heads * keys


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * d_model + 4 * d_model * d_model + d_model)
