"""EDSR residual block: 3x3 convolution, ReLU, 3x3 convolution, scaled by 0.1, plus the block input."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + ReLU + Conv2d + scale + residual add"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.80 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 96}}

batch_size = 32
channels = 64
height = 128
width = 128
kernel_size = 3
res_scale = 0.1


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, res_scale: float):
        super().__init__()
        self.res_scale = res_scale
        self.conv1 = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.res_scale * self.conv2(torch.relu(self.conv1(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size, res_scale]


def kbench_flops():
    outputs = batch_size * channels * height * width
    return outputs * (2 * (2 * channels * kernel_size * kernel_size + 1) + 3)


def kbench_bytes():
    x = batch_size * channels * height * width
    w = 2 * channels * (channels * kernel_size * kernel_size + 1)
    return 4 * (2 * x + w)
