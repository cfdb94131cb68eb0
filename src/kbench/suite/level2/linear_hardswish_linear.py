"""MobileNetV3-style classifier: Linear 960 -> 1280, hardswish, Linear 1280 -> 1000."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + hardswish + Linear"
KBENCH_SMALL = {"batch_size": 32, "in_features": 64, "hidden": 96, "num_classes": 40}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.19 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 221184}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 16384
in_features = 960
hidden = 1280
num_classes = 1000


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_classes: int):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.hardswish(self.fc1(x)))


def get_inputs():
    # Features after global pooling: scaled so that hardswish sees both its flat and curved parts.
    return [torch.randn(batch_size, in_features) * 3.0]


def get_init_inputs():
    return [in_features, hidden, num_classes]


def kbench_flops():
    return 2 * batch_size * (hidden * in_features + num_classes * hidden) + 5 * batch_size * hidden


def kbench_bytes():
    return 4 * (
        batch_size * in_features
        + hidden * (in_features + 1)
        + num_classes * (hidden + 1)
        + batch_size * num_classes
    )
