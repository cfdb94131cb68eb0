"""ResNet basic block tail: bias-free 3x3 convolution, BatchNorm2d with batch statistics (random affine), plus the block input, ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + BatchNorm + residual add + ReLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.663 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.35 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 256}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.02}}

batch_size = 64
channels = 128
height = 64
width = 64
kernel_size = 3


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.norm = nn.BatchNorm2d(channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)) + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    outputs = batch_size * channels * height * width
    return outputs * (2 * channels * kernel_size * kernel_size + 12)


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * channels * kernel_size * kernel_size + 2 * channels
    return 4 * (2 * x + w)
