"""ASPP branch: bias-free 3x3 convolution with dilation 6, BatchNorm2d with batch statistics (random affine), ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Dilated Conv2d + BatchNorm + ReLU"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 16, "height": 24, "width": 24}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.327 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.15 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 128}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 16
in_channels = 256
out_channels = 256
height = 64
width = 64
kernel_size = 3
dilation = 6


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int):
        super().__init__()
        padding = dilation * (kernel_size // 2)
        self.conv = nn.Conv2d(
            in_channels, out_channels, kernel_size, padding=padding, dilation=dilation, bias=False
        )
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, dilation]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (2 * in_channels * kernel_size * kernel_size + 10)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * kernel_size * kernel_size + 2 * out_channels
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
