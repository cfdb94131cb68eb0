"""Multi-head self-attention written out: separate Q/K/V projections, explicit scaled softmax over all keys, output projection."""

import math

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Multi-head self-attention (explicit softmax)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "d_model": 32, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.79 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 24}}
# In bfloat16 the reference itself is off from float64 by up to 0.017 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}

batch_size = 8
seq_len = 1024
d_model = 1024
num_heads = 16


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        # Query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform.
        for lin, scale in ((self.q, 1.5), (self.k, 1.5), (self.v, 1.0), (self.o, 1.0)):
            nn.init.normal_(lin.weight, std=scale * d_model ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.num_heads
        q = self.q(x).view(b, s, h, d // h).transpose(1, 2)
        k = self.k(x).view(b, s, h, d // h).transpose(1, 2)
        v = self.v(x).view(b, s, h, d // h).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1)
        return self.o((weights @ v).transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads]


def kbench_flops():
    n = batch_size * seq_len
    return 2 * n * 4 * d_model * d_model + 4 * batch_size * seq_len * seq_len * d_model + 5 * batch_size * num_heads * seq_len * seq_len


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * d_model + 4 * d_model * d_model + 4 * d_model)
