"""Bias-free Linear layer, RMSNorm over the output features (random weight), then SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + RMSNorm + SiLU"
KBENCH_SMALL = {"batch_size": 32, "in_features": 64, "out_features": 128}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.38 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 26624}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.74 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.019, "rtol": 0.038}}

batch_size = 4096
in_features = 4096
out_features = 4096
eps = 1e-06


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, eps: float):
        super().__init__()
        self.eps = eps
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.weight = nn.Parameter(torch.randn(out_features) * 0.5 + 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        h = h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
        return F.silu(h)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, eps]


def kbench_flops():
    return 2 * batch_size * out_features * in_features + 10 * batch_size * out_features


def kbench_bytes():
    return 4 * (
        batch_size * in_features + out_features * (in_features + 1) + batch_size * out_features
    )
