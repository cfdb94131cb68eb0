"""MobileNetV2 linear bottleneck end: bias-free 1x1 projection convolution from the expanded channels, BatchNorm2d with batch statistics (random affine), plus the block's input (no activation)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Pointwise Conv2d + BatchNorm + residual add"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "expansion": 6, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.02}}

batch_size = 64
channels = 64
expansion = 6
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, channels: int, expansion: int):
        super().__init__()
        self.project = nn.Conv2d(channels * expansion, channels, 1, bias=False)
        self.norm = nn.BatchNorm2d(channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, expanded: torch.Tensor, shortcut: torch.Tensor) -> torch.Tensor:
        return shortcut + self.norm(self.project(expanded))


def get_inputs():
    # The expanded features come out of a ReLU6.
    expanded = torch.clamp(
        torch.randn(batch_size, channels * expansion, height, width) + 0.5, 0.0, 6.0
    )
    shortcut = torch.randn(batch_size, channels, height, width)
    return [expanded, shortcut]


def get_init_inputs():
    return [channels, expansion]


def kbench_flops():
    outputs = batch_size * channels * height * width
    return outputs * (2 * channels * expansion + 10)


def kbench_bytes():
    expanded = batch_size * channels * expansion * height * width
    w = channels * (channels * expansion + 2)
    return 4 * (expanded + 2 * batch_size * channels * height * width + w)
