"""ResNet stem: bias-free 7x7 convolution with stride 2 from RGB to 64 channels, BatchNorm2d with batch statistics (random affine), ReLU, 3x3 max pooling with stride 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d 7x7 stride 2 + BatchNorm + ReLU + MaxPool"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 3, "out_channels": 16, "image_size": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

batch_size = 128
in_channels = 3
out_channels = 64
image_size = 224


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=2, padding=3, bias=False)
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(torch.relu(self.norm(self.conv(x))), kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels]


def kbench_flops():
    conv_out = batch_size * out_channels * (image_size // 2) ** 2
    return conv_out * (2 * in_channels * 49 + 10 + 9)


def kbench_bytes():
    x = batch_size * in_channels * image_size * image_size
    w = out_channels * (in_channels * 49 + 2)
    y = batch_size * out_channels * (image_size // 4) ** 2
    return 4 * (x + w + y)
