"""3-D U-Net block with group normalisation: 3x3x3 convolution, GroupNorm with 8 groups (random affine), ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv3d + GroupNorm + ReLU"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 16,
    "depth": 6,
    "height": 8,
    "width": 8,
    "groups": 4,
}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.80 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 12}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.95 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.024, "rtol": 0.048}}

batch_size = 4
in_channels = 64
out_channels = 64
depth = 32
height = 48
width = 48
groups = 8
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, groups: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]


def kbench_flops():
    outputs = batch_size * out_channels * depth * height * width
    return outputs * (2 * in_channels * kernel_size**3 + 1 + 10)


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = out_channels * (in_channels * kernel_size**3 + 3)
    y = batch_size * out_channels * depth * height * width
    return 4 * (x + w + y)
