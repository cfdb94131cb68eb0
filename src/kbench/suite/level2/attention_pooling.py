"""Additive attention pooling: scores v^T tanh(W x_t + b) per token, softmax over the tokens, then the attention-weighted sum of the tokens."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + tanh + Linear + softmax + weighted sum"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 16, "features": 64, "attn_dim": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.95 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.024, "rtol": 0.024}}
# bf16 at the fp32 size ran 0.363 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.06 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 512}}

batch_size = 64
seq_len = 512
features = 1024
attn_dim = 1024


class Model(nn.Module):
    def __init__(self, features: int, attn_dim: int):
        super().__init__()
        self.proj = nn.Linear(features, attn_dim)
        self.score = nn.Linear(attn_dim, 1, bias=False)
        with torch.no_grad():
            self.score.weight.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, seq_len, features) -> (batch, features)
        weights = torch.softmax(self.score(torch.tanh(self.proj(x))), dim=1)
        return (weights * x).sum(dim=1)


def get_inputs():
    x = torch.randn(batch_size, seq_len, features)
    x.add_(torch.randn(batch_size, 1, features))
    return [x]


def get_init_inputs():
    return [features, attn_dim]


def kbench_flops():
    rows = batch_size * seq_len
    return 2 * rows * attn_dim * features + 6 * rows * attn_dim + 2 * rows * features


def kbench_bytes():
    return 4 * (batch_size * seq_len * features + attn_dim * (features + 2) + batch_size * features)
