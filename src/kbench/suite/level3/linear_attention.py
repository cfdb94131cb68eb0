"""Linear (kernelised) attention: feature map elu(x) + 1 on queries and keys, keys-values summarised per head, normalised by the key sum, LayerNorm, output projection; non-causal."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Linear attention (elu + 1 feature map)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 64, "d_model": 32, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.85 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 12}}
# In bfloat16 the reference itself is off from float64 by up to 0.014 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 4
seq_len = 4096
d_model = 1024
num_heads = 16


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.norm = nn.LayerNorm(d_model)
        self.o = nn.Linear(d_model, d_model)
        nn.init.normal_(self.qkv.weight, std=d_model ** -0.5)
        with torch.no_grad():
            self.qkv.weight[: 2 * d_model].mul_(2.0)  # sharper features than elu(N(0, 1)) + 1
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        h = self.num_heads
        q, k, v = self.qkv(x).view(b, s, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k = F.elu(q) + 1.0, F.elu(k) + 1.0
        kv = k.transpose(-2, -1) @ v  # (b, h, dk, dv): the whole sequence summarised
        norm = q @ k.sum(dim=2, keepdim=True).transpose(-2, -1)  # (b, h, s, 1)
        out = (q @ kv) / norm
        # The output is an average over the whole sequence: normalise it per token.
        return self.o(self.norm(out.transpose(1, 2).reshape(b, s, d)))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads]


def kbench_flops():
    n, hd = batch_size * seq_len, d_model // num_heads
    return 2 * n * 4 * d_model * d_model + 2 * 2 * n * d_model * hd + 20 * n * d_model


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * d_model + 4 * d_model * d_model + 6 * d_model)
