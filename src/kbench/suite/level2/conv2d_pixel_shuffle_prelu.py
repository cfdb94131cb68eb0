"""SRResNet upsampling block: 3x3 convolution to 4x the channels, pixel shuffle by 2, PReLU with one learned slope per channel."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + PixelShuffle + PReLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "height": 12, "width": 12}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.54 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.014, "rtol": 0.014}}
# bf16 at the fp32 size ran 0.546 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.43 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 80}}

batch_size = 16
channels = 64
height = 96
width = 96
kernel_size = 3
upscale = 2


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, upscale: int):
        super().__init__()
        self.conv = nn.Conv2d(
            channels, channels * upscale * upscale, kernel_size, padding=kernel_size // 2
        )
        self.shuffle = nn.PixelShuffle(upscale)
        self.act = nn.PReLU(channels)
        with torch.no_grad():
            self.act.weight.uniform_(0.05, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.shuffle(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size, upscale]


def kbench_flops():
    outputs = batch_size * channels * upscale * upscale * height * width
    return outputs * (2 * channels * kernel_size * kernel_size + 3)


def kbench_bytes():
    x = batch_size * channels * height * width
    w = channels * upscale * upscale * (channels * kernel_size * kernel_size + 1) + channels
    y = batch_size * channels * upscale * upscale * height * width
    return 4 * (x + w + y)
