"""C3D stage: 3x3x3 convolution, ReLU, 2x2x2 max pooling with stride 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv3d + ReLU + MaxPool3d"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 4,
    "out_channels": 8,
    "depth": 4,
    "height": 8,
    "width": 8,
}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.52 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.013, "rtol": 0.013}}
# bf16 at the fp32 size ran 0.47 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 40}}

batch_size = 8
in_channels = 64
out_channels = 128
depth = 8
height = 56
width = 56
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool3d(torch.relu(self.conv(x)), 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    outputs = batch_size * out_channels * depth * height * width
    return outputs * (2 * in_channels * kernel_size**3 + 3)


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = out_channels * (in_channels * kernel_size**3 + 1)
    y = batch_size * out_channels * (depth // 2) * (height // 2) * (width // 2)
    return 4 * (x + w + y)
