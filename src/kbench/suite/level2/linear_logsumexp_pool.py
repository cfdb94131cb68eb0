"""Log-sum-exp pooling over a bag of instances: Linear on every instance, then logsumexp over the instances of each bag."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + logsumexp pooling"
KBENCH_SMALL = {"bags": 4, "instances": 8, "in_features": 64, "out_features": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.36 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"bags": 448}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

bags = 64
instances = 64
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (bags, instances, in_features) -> (bags, out_features)
        return torch.logsumexp(self.linear(x), dim=1)


def get_inputs():
    return [torch.randn(bags, instances, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def kbench_flops():
    rows = bags * instances
    return 2 * rows * out_features * in_features + 4 * rows * out_features


def kbench_bytes():
    return 4 * (
        bags * instances * in_features + out_features * (in_features + 1) + bags * out_features
    )
