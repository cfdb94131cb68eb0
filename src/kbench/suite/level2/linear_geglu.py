"""GEGLU feed-forward input: one Linear to twice the width, split in halves, value half times GELU of the gate half."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GEGLU"
KBENCH_SMALL = {"tokens": 32, "dim": 64, "inner": 96}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.32 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"tokens": 32768}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.53 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.014, "rtol": 0.027}}

tokens = 4096
dim = 1280
inner = 5120


class Model(nn.Module):
    def __init__(self, dim: int, inner: int):
        super().__init__()
        self.proj = nn.Linear(dim, 2 * inner)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        value, gate = self.proj(x).chunk(2, dim=-1)
        return value * F.gelu(gate)


def get_inputs():
    return [torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim, inner]


def kbench_flops():
    return 2 * tokens * 2 * inner * dim + 10 * tokens * inner


def kbench_bytes():
    return 4 * (tokens * dim + 2 * inner * (dim + 1) + tokens * inner)
