"""Selective-scan step sizes (Mamba's dt projection): low-rank Linear to the inner width, plus a per-channel bias, then softplus."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + bias + softplus"
KBENCH_SMALL = {"tokens": 64, "dt_rank": 16, "inner": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.74 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.019, "rtol": 0.019}}
# bf16 at the fp32 size ran 0.79 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"tokens": 102400}}

tokens = 32768
dt_rank = 256
inner = 4096


class Model(nn.Module):
    def __init__(self, dt_rank: int, inner: int):
        super().__init__()
        self.proj = nn.Linear(dt_rank, inner, bias=False)
        self.dt_bias = nn.Parameter(torch.randn(inner) - 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(self.proj(x) + self.dt_bias)


def get_inputs():
    return [torch.randn(tokens, dt_rank)]


def get_init_inputs():
    return [dt_rank, inner]


def kbench_flops():
    return 2 * tokens * inner * dt_rank + 5 * tokens * inner


def kbench_bytes():
    return 4 * (tokens * dt_rank + inner * (dt_rank + 1) + tokens * inner)
