"""Linear layer followed by the exact (erf) GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GELU"
KBENCH_SMALL = {"batch_size": 32, "in_features": 128, "out_features": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.53 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.014, "rtol": 0.014}}
# bf16 at the fp32 size ran 0.23 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 22528}}

batch_size = 2048
in_features = 8192
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def kbench_flops():
    return 2 * batch_size * out_features * in_features + 9 * batch_size * out_features


def kbench_bytes():
    return 4 * (
        batch_size * in_features + out_features * (in_features + 1) + batch_size * out_features
    )
