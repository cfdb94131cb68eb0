"""Highway layer: transform gate T = sigmoid(Linear_T(x)), candidate H = ReLU(Linear_H(x)), output T*H + (1-T)*x."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Highway layer"
KBENCH_SMALL = {"batch_size": 32, "features": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.29 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 17408}}
# At that size (71M outputs) the bf16 reference is off from float64 by up to 0.031 (one bf16
# step near 0.06; H200 audit 2026-11-30): atol 0.01 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.02}}

batch_size = 2048
features = 4096


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.hidden = nn.Linear(features, features)
        self.transform = nn.Linear(features, features)
        with torch.no_grad():
            self.transform.bias.fill_(-1.0)  # lean towards carrying the input, as in the paper

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.sigmoid(self.transform(x))
        h = torch.relu(self.hidden(x))
        return t * h + (1.0 - t) * x


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]


def kbench_flops():
    return 4 * batch_size * features * features + 12 * batch_size * features


def kbench_bytes():
    return 4 * (2 * batch_size * features + 2 * features * (features + 1))
