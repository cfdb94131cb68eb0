"""MobileNetV2 expansion: bias-free 1x1 convolution to 6x the channels, BatchNorm2d with batch statistics (random affine), ReLU6."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Pointwise Conv2d + BatchNorm + ReLU6"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "expansion": 6, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.02}}

batch_size = 32
in_channels = 64
expansion = 6
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, in_channels: int, expansion: int):
        super().__init__()
        hidden = in_channels * expansion
        self.conv = nn.Conv2d(in_channels, hidden, 1, bias=False)
        self.norm = nn.BatchNorm2d(hidden, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(3.0, 1.5)  # wide enough to reach the cap at 6
            self.norm.bias.normal_(1.0, 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, expansion]


def kbench_flops():
    outputs = batch_size * in_channels * expansion * height * width
    return outputs * (2 * in_channels + 12)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = in_channels * expansion * (in_channels + 2)
    y = batch_size * in_channels * expansion * height * width
    return 4 * (x + w + y)
