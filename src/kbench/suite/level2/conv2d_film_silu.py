"""FiLM-conditioned convolution (diffusion ResBlock style): 3x3 convolution, per-sample per-channel scale and shift from a conditioning input, h * (1 + scale) + shift, then SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + FiLM scale/shift + SiLU"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.74 of atol 0.02, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.037, "rtol": 0.037}}
# bf16 eager on the H200 at the fp32 size: 1.007 ms (2026-11-30), 0.955 ms (2026-12-01), at the 1 ms floor.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 80}}

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

    def forward(self, x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        # scale, shift: (batch, out_channels)
        h = self.conv(x)
        h = h * (1.0 + scale[:, :, None, None]) + shift[:, :, None, None]
        return F.silu(h)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    scale = torch.randn(batch_size, out_channels) * 0.5
    shift = torch.randn(batch_size, out_channels) * 0.5
    return [x, scale, shift]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (2 * in_channels * kernel_size * kernel_size + 9)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * (in_channels * kernel_size * kernel_size + 1)
    y = batch_size * out_channels * height * width
    return 4 * (x + 2 * batch_size * out_channels + w + y)
