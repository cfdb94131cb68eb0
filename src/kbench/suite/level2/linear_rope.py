"""Query projection with rotary position embedding: bias-free Linear, split into heads, rotated by the given per-token cos/sin tables (rotate-half form)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + rotary embedding"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 16, "hidden": 64, "heads": 4, "head_dim": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.50 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 20}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.62 of atol 0.02, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.031, "rtol": 0.031}}

batch_size = 4
seq_len = 1024
hidden = 4096
heads = 32
head_dim = 128


class Model(nn.Module):
    def __init__(self, hidden: int, heads: int, head_dim: int):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.q_proj = nn.Linear(hidden, heads * head_dim, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        # x: (batch, seq, hidden); cos, sin: (batch, seq, head_dim) -> (batch, heads, seq, head_dim)
        batch, seq, _ = x.shape
        q = self.q_proj(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        first, second = q.chunk(2, dim=-1)
        rotated = torch.cat((-second, first), dim=-1)
        return q * cos.unsqueeze(1) + rotated * sin.unsqueeze(1)


def get_inputs():
    # Tables as a transformer computes them for random positions (base 10000).
    positions = torch.randint(0, 8192, (batch_size, seq_len)).float()
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = positions[..., None] * inv_freq
    angles = torch.cat((angles, angles), dim=-1)
    return [torch.randn(batch_size, seq_len, hidden), angles.cos(), angles.sin()]


def get_init_inputs():
    return [hidden, heads, head_dim]


def kbench_flops():
    rows = batch_size * seq_len
    return 2 * rows * heads * head_dim * hidden + 4 * rows * heads * head_dim


def kbench_bytes():
    return 4 * (
        batch_size * seq_len * (hidden + 2 * head_dim)
        + heads * head_dim * hidden
        + batch_size * seq_len * heads * head_dim
    )
