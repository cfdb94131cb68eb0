"""ShuffleNet unit start: bias-free grouped 1x1 convolution (3 groups), BatchNorm2d with batch statistics (random affine), ReLU, channel shuffle."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Grouped pointwise Conv2d + BatchNorm + ReLU + channel shuffle"
KBENCH_SMALL = {"batch_size": 2, "channels": 24, "height": 12, "width": 12, "groups": 3}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 128
channels = 240
height = 56
width = 56
groups = 3


class Model(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.groups = groups
        self.conv = nn.Conv2d(channels, channels, 1, groups=groups, bias=False)
        self.norm = nn.BatchNorm2d(channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.norm(self.conv(x)))
        batch, channels, height, width = h.shape
        h = h.view(batch, self.groups, channels // self.groups, height, width).transpose(1, 2)
        return h.reshape(batch, channels, height, width)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, groups]


def kbench_flops():
    outputs = batch_size * channels * height * width
    return outputs * (2 * (channels // groups) + 10)


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * (channels // groups) + 2 * channels
    return 4 * (2 * x + w)
