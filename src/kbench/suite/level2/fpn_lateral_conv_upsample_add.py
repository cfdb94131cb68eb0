"""Feature pyramid top-down step: 1x1 lateral convolution of the fine map plus the coarse map upsampled 2x (nearest)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Pointwise Conv2d + nearest upsample + add"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30): the reference is off from float64 by up to 0.031
# (a 512-channel sum); the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.02}}
# bf16 at the fp32 size ran 0.63 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 64}}

batch_size = 16
in_channels = 512
out_channels = 256
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.lateral = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, fine: torch.Tensor, coarse: torch.Tensor) -> torch.Tensor:
        return self.lateral(fine) + F.interpolate(coarse, scale_factor=2, mode="nearest")


def get_inputs():
    fine = torch.randn(batch_size, in_channels, height, width)
    coarse = torch.randn(batch_size, out_channels, height // 2, width // 2)
    return [fine, coarse]


def get_init_inputs():
    return [in_channels, out_channels]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return outputs * (2 * in_channels + 2)


def kbench_bytes():
    fine = batch_size * in_channels * height * width
    coarse = batch_size * out_channels * (height // 2) * (width // 2)
    w = out_channels * (in_channels + 1)
    y = batch_size * out_channels * height * width
    return 4 * (fine + coarse + w + y)
