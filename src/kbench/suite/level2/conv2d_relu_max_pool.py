"""VGG-style stage end: 3x3 convolution, ReLU, 2x2 max pooling with stride 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + ReLU + MaxPool"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.52 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.013, "rtol": 0.013}}
# bf16 at the fp32 size ran 0.86 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 96}}

batch_size = 32
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(torch.relu(self.conv(x)), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (2 * in_channels * kernel_size * kernel_size + 3)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * (in_channels * kernel_size * kernel_size + 1)
    y = batch_size * out_channels * (height // 2) * (width // 2)
    return 4 * (x + w + y)
