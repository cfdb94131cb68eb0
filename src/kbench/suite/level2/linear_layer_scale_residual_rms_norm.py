"""Pre-norm residual update: Linear output scaled per channel (LayerScale), added to the residual stream, then RMSNorm; returns the new residual stream and its normalised copy."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + LayerScale + residual add + RMSNorm (two outputs)"
KBENCH_SMALL = {"tokens": 32, "inner": 128, "hidden": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.33 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"tokens": 61440}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.91 of atol 0.03, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.069, "rtol": 0.046}}

tokens = 8192
inner = 2048
hidden = 2048
eps = 1e-06


class Model(nn.Module):
    def __init__(self, inner: int, hidden: int, eps: float):
        super().__init__()
        self.eps = eps
        self.proj = nn.Linear(inner, hidden, bias=False)
        self.layer_scale = nn.Parameter(torch.rand(hidden) + 0.5)
        self.weight = nn.Parameter(torch.randn(hidden) * 0.5 + 1.0)

    def forward(self, h: torch.Tensor, residual: torch.Tensor):
        residual = residual + self.layer_scale * self.proj(h)
        normed = residual * torch.rsqrt(residual.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return residual, normed * self.weight


def get_inputs():
    return [torch.randn(tokens, inner), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [inner, hidden, eps]


def kbench_flops():
    return 2 * tokens * hidden * inner + 8 * tokens * hidden


def kbench_bytes():
    return 4 * (tokens * inner + hidden * (inner + 2) + 3 * tokens * hidden)
