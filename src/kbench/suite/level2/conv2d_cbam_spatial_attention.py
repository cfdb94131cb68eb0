"""Convolution with CBAM spatial attention: 3x3 convolution, channel mean and channel max maps, 7x7 convolution of the two maps, sigmoid, multiply the features."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + channel mean/max + Conv2d 7x7 + sigmoid + multiply"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30): the reference is off from float64 by up to 0.031 at values
# near 2 (one bf16 step); the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}
# bf16 at the fp32 size ran 0.903 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.48 ms (audit 2026-11-30).
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
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x)
        maps = torch.cat((h.mean(dim=1, keepdim=True), h.amax(dim=1, keepdim=True)), dim=1)
        return h * torch.sigmoid(self.spatial(maps))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (
        2 * in_channels * kernel_size * kernel_size + 4
    ) + batch_size * height * width * (2 * 2 * 49 + 5)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * (in_channels * kernel_size * kernel_size + 1) + 2 * 49 + 1
    y = batch_size * out_channels * height * width
    return 4 * (x + w + y)
