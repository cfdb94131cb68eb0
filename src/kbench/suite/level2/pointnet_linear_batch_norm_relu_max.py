"""PointNet feature layer: a shared Linear on every point, BatchNorm over all points (batch statistics, random affine), ReLU, then max over the points of each cloud."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "PointNet shared MLP + BatchNorm + ReLU + max over points"
KBENCH_SMALL = {"clouds": 4, "points": 64, "in_features": 32, "out_features": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.68 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"clouds": 112}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

clouds = 32
points = 2048
in_features = 512
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.norm = nn.BatchNorm1d(out_features, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (clouds, points, in_features) -> (clouds, out_features)
        clouds, points, _ = x.shape
        h = self.norm(self.linear(x).reshape(clouds * points, -1))
        return torch.relu(h).reshape(clouds, points, -1).amax(dim=1)


def get_inputs():
    return [torch.randn(clouds, points, in_features)]


def get_init_inputs():
    return [in_features, out_features]


def kbench_flops():
    rows = clouds * points
    return 2 * rows * out_features * in_features + 10 * rows * out_features


def kbench_bytes():
    return 4 * (
        clouds * points * in_features + out_features * (in_features + 2) + clouds * out_features
    )
