"""Pre-norm transformer encoder layers written out, over padded sequences: keys past each sequence's length (an integer input) are masked."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Pre-norm transformer encoder with padding mask"
KBENCH_SMALL = {"batch_size": 3, "seq_len": 16, "d_model": 32, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.99 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 24}}
# In bfloat16 the reference itself is off from float64 by up to 0.015 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 8
seq_len = 1024
d_model = 768
num_heads = 12
num_layers = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.norm1 = random_norm(nn.LayerNorm(d_model))
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = random_norm(nn.LayerNorm(d_model))
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)
        nn.init.normal_(self.qkv.weight, std=d_model ** -0.5)

    def forward(self, x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, self.num_heads, d // self.num_heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, num_layers: int):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads) for _ in range(num_layers))
        self.norm = random_norm(nn.LayerNorm(d_model))

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        # lengths: (batch,) int64, each in [1, seq_len]; keys at positions >= length are ignored
        keep = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
        keep = keep[:, None, None, :]  # (batch, 1, 1, seq) broadcast over heads and queries
        for layer in self.layers:
            x = layer(x, keep)
        return self.norm(x)


def get_inputs():
    x = torch.randn(batch_size, seq_len, d_model)
    lengths = torch.randint(seq_len // 4, seq_len + 1, (batch_size,))
    return [x, lengths]


def get_init_inputs():
    return [d_model, num_heads, num_layers]


def kbench_flops():
    n = batch_size * seq_len
    per_layer = 2 * n * 12 * d_model * d_model + 4 * batch_size * seq_len * seq_len * d_model
    per_layer += 5 * batch_size * num_heads * seq_len * seq_len + 8 * n * 4 * d_model + 20 * n * d_model
    return num_layers * per_layer + 8 * n * d_model


def kbench_bytes():
    params = num_layers * (12 * d_model * d_model + 13 * d_model) + 2 * d_model
    return 4 * (2 * batch_size * seq_len * d_model + params) + 8 * batch_size
