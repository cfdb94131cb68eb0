"""Grouped-query self-attention: 16 query heads share 4 key/value heads (repeated to match), non-causal scaled dot-product attention."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Grouped-query attention"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "d_model": 64, "num_heads": 4, "num_kv_heads": 2}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.33 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 16}}
# In bfloat16 the reference itself is off from float64 by up to 0.016 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}

batch_size = 2
seq_len = 2048
d_model = 2048
num_heads = 16
num_kv_heads = 4


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = d_model // num_heads
        self.q = nn.Linear(d_model, num_heads * self.head_dim, bias=False)
        self.kv = nn.Linear(d_model, 2 * num_kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(num_heads * self.head_dim, d_model, bias=False)
        # Query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform.
        nn.init.normal_(self.q.weight, std=1.5 * d_model ** -0.5)
        nn.init.normal_(self.kv.weight, std=d_model ** -0.5)
        nn.init.normal_(self.o.weight, std=d_model ** -0.5)
        with torch.no_grad():
            self.kv.weight[: num_kv_heads * self.head_dim].mul_(1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        hd, kvh = self.head_dim, self.num_kv_heads
        q = self.q(x).view(b, s, self.num_heads, hd).transpose(1, 2)
        k, v = self.kv(x).view(b, s, 2, kvh, hd).permute(2, 0, 3, 1, 4)
        groups = self.num_heads // kvh
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, num_kv_heads]


def kbench_flops():
    n, hd = batch_size * seq_len, d_model // num_heads
    proj = 2 * n * d_model * (2 * num_heads * hd + 2 * num_kv_heads * hd)
    return proj + 4 * batch_size * num_heads * seq_len * seq_len * hd + 5 * batch_size * num_heads * seq_len * seq_len


def kbench_bytes():
    hd = d_model // num_heads
    return 4 * (2 * batch_size * seq_len * d_model + d_model * (2 * num_heads * hd + 2 * num_kv_heads * hd))
