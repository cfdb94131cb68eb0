"""Attention with an additive position bias: softmax(Q K^T / sqrt(d) + bias) V, the bias (one matrix per head) given as an input."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Batched matmul + scale + bias + softmax + batched matmul"
KBENCH_SMALL = {"batch_size": 2, "heads": 2, "seq_len": 32, "head_dim": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.907 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.55 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 24}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.03, "rtol": 0.02}}

batch_size = 8
heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor
    ) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * (q.shape[-1] ** -0.5) + bias
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    shape = (batch_size, heads, seq_len, head_dim)
    return [
        torch.randn(shape),
        torch.randn(shape),
        torch.randn(shape),
        torch.randn(1, heads, seq_len, seq_len),
    ]


def get_init_inputs():
    return []


def kbench_flops():
    scores = batch_size * heads * seq_len * seq_len
    return 4 * scores * head_dim + 7 * scores


def kbench_bytes():
    return 4 * (4 * batch_size * heads * seq_len * head_dim + heads * seq_len * seq_len)
