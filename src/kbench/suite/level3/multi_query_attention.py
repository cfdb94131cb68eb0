"""Causal multi-query self-attention: many query heads, one shared key/value head, scaled dot-product attention with a causal mask."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Causal multi-query attention"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "d_model": 64, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.32 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 64}}
# In bfloat16 the reference itself is off from float64 by up to 0.019 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}

batch_size = 8
seq_len = 2048
d_model = 1024
num_heads = 8


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.qkv = nn.Linear(d_model, d_model + 2 * self.head_dim)
        self.o = nn.Linear(d_model, d_model)
        # Query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform.
        nn.init.normal_(self.qkv.weight, std=d_model ** -0.5)
        nn.init.normal_(self.o.weight, std=d_model ** -0.5)
        with torch.no_grad():
            self.qkv.weight[: d_model + self.head_dim].mul_(1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        hd = self.head_dim
        q, k, v = self.qkv(x).split([d, hd, hd], dim=-1)
        q = q.view(b, s, self.num_heads, hd).transpose(1, 2)
        k = k[:, None].expand(b, self.num_heads, s, hd)
        v = v[:, None].expand(b, self.num_heads, s, hd)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads]


def kbench_flops():
    n, hd = batch_size * seq_len, d_model // num_heads
    proj = 2 * n * d_model * (2 * d_model + 2 * hd)
    # the causal half of the score matrix
    return proj + 2 * batch_size * num_heads * seq_len * seq_len * hd + 3 * batch_size * num_heads * seq_len * seq_len


def kbench_bytes():
    hd = d_model // num_heads
    return 4 * (2 * batch_size * seq_len * d_model + d_model * (2 * d_model + 2 * hd) + 2 * d_model + 2 * hd)
