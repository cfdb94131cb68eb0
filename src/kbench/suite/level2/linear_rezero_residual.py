"""ReZero residual block: x + alpha * GELU(Linear(x)) with a learned scalar alpha."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + GELU + scaled residual"
KBENCH_SMALL = {"batch_size": 32, "features": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.77 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}
# bf16 at the fp32 size ran 0.31 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 32768}}

batch_size = 4096
features = 4096


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.alpha = nn.Parameter(torch.tensor(0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.alpha * F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


def kbench_flops():
    return 2 * batch_size * features * features + 11 * batch_size * features


def kbench_bytes():
    return 4 * (2 * batch_size * features + features * (features + 1) + 1)
