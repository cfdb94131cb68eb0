"""Mask head: 3x3 convolution to 8 mask logits, bilinear upsampling by 4, sigmoid."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + bilinear upsample + sigmoid"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "masks": 4, "height": 12, "width": 12}
KBENCH_DTYPES = ("float32", "bfloat16")

batch_size = 64
in_channels = 256
masks = 8
height = 128
width = 128
kernel_size = 3
upscale = 4


class Model(nn.Module):
    def __init__(self, in_channels: int, masks: int, kernel_size: int, upscale: int):
        super().__init__()
        self.upscale = upscale
        self.conv = nn.Conv2d(in_channels, masks, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = F.interpolate(
            self.conv(x), scale_factor=self.upscale, mode="bilinear", align_corners=False
        )
        return torch.sigmoid(logits)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width) * 3.0]


def get_init_inputs():
    return [in_channels, masks, kernel_size, upscale]


def kbench_flops():
    outputs = batch_size * masks * height * width
    return (
        outputs * (2 * in_channels * kernel_size * kernel_size + 1)
        + 12 * outputs * upscale * upscale
    )


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = masks * (in_channels * kernel_size * kernel_size + 1)
    y = batch_size * masks * height * width * upscale * upscale
    return 4 * (x + w + y)
