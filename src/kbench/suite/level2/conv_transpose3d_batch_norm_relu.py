"""3-D generator block: bias-free transposed 4x4x4 convolution with stride 2, BatchNorm3d with batch statistics (random affine), ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "ConvTranspose3d + BatchNorm + ReLU"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 4,
    "depth": 4,
    "height": 4,
    "width": 4,
}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

batch_size = 16
in_channels = 64
out_channels = 32
depth = 16
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(
            in_channels, out_channels, 4, stride=2, padding=1, bias=False
        )
        self.norm = nn.BatchNorm3d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


def kbench_flops():
    inputs = batch_size * in_channels * depth * height * width
    outputs = batch_size * out_channels * 8 * depth * height * width
    return 2 * inputs * out_channels * 64 + 10 * outputs


def kbench_bytes():
    x = batch_size * in_channels * depth * height * width
    w = in_channels * out_channels * 64 + 2 * out_channels
    y = batch_size * out_channels * 8 * depth * height * width
    return 4 * (x + w + y)
