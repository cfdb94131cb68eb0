"""Query projection with per-head RMSNorm (QK-norm): bias-free Linear, split into heads, RMSNorm over each head's dimension with a learned weight."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + per-head RMSNorm"
KBENCH_SMALL = {"tokens": 32, "hidden": 64, "heads": 4, "head_dim": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.35 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"tokens": 29696}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.58 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.015, "rtol": 0.03}}

tokens = 4096
hidden = 4096
heads = 32
head_dim = 128
eps = 1e-06


class Model(nn.Module):
    def __init__(self, hidden: int, heads: int, head_dim: int, eps: float):
        super().__init__()
        self.heads, self.head_dim, self.eps = heads, head_dim, eps
        self.q_proj = nn.Linear(hidden, heads * head_dim, bias=False)
        self.weight = nn.Parameter(torch.randn(head_dim) * 0.5 + 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(x).view(x.shape[0], self.heads, self.head_dim)
        q = q * torch.rsqrt(q.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return q * self.weight


def get_inputs():
    return [torch.randn(tokens, hidden)]


def get_init_inputs():
    return [hidden, heads, head_dim, eps]


def kbench_flops():
    return 2 * tokens * heads * head_dim * hidden + 5 * tokens * heads * head_dim


def kbench_bytes():
    return 4 * (tokens * hidden + heads * head_dim * hidden + head_dim + tokens * heads * head_dim)
