"""Linear layer, GroupNorm of the output features in 32 groups (random affine), then SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GroupNorm + SiLU"
KBENCH_SMALL = {"batch_size": 32, "in_features": 64, "out_features": 128, "groups": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.39 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 26624}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.75 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.019, "rtol": 0.038}}

batch_size = 4096
in_features = 4096
out_features = 4096
groups = 32


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, groups: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(groups, out_features)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.norm(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]


def kbench_flops():
    return 2 * batch_size * out_features * in_features + 14 * batch_size * out_features


def kbench_bytes():
    return 4 * (
        batch_size * in_features + out_features * (in_features + 3) + batch_size * out_features
    )
