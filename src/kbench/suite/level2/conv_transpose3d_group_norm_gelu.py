"""3-D decoder upsampling block: transposed 3x3x3 convolution with stride 2 (padding 1, output padding 1), GroupNorm with 8 groups (random affine), GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "ConvTranspose3d + GroupNorm + GELU"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 8,
    "depth": 4,
    "height": 4,
    "width": 4,
    "groups": 4,
}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.77 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.039}}

batch_size = 8
in_channels = 64
out_channels = 32
depth = 24
height = 48
width = 48
groups = 8


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(
            in_channels, out_channels, 3, stride=2, padding=1, output_padding=1
        )
        self.norm = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]


def kbench_flops():
    inputs = batch_size * in_channels * depth * height * width
    outputs = batch_size * out_channels * 8 * depth * height * width
    return 2 * inputs * out_channels * 27 + 18 * outputs


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = out_channels * (in_channels * 27 + 3)
    y = batch_size * out_channels * 8 * depth * height * width
    return 4 * (x + w + y)
