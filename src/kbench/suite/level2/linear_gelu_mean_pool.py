"""Sentence embedding: Linear and GELU on every token, then the mean over the tokens of each sequence (tokens share a per-sequence component)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GELU + mean pooling"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 8, "in_features": 64, "out_features": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.26 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 304}}

batch_size = 32
seq_len = 128
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, seq_len, in_features) -> (batch, out_features)
        return F.gelu(self.linear(x)).mean(dim=1)


def get_inputs():
    x = torch.randn(batch_size, seq_len, in_features)
    x.add_(torch.randn(batch_size, 1, in_features))
    return [x]


def get_init_inputs():
    return [in_features, out_features]


def kbench_flops():
    rows = batch_size * seq_len
    return 2 * rows * out_features * in_features + 10 * rows * out_features


def kbench_bytes():
    return 4 * (
        batch_size * seq_len * in_features
        + out_features * (in_features + 1)
        + batch_size * out_features
    )
