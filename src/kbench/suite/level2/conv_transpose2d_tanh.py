"""DCGAN generator output: transposed 4x4 convolution with stride 2 to RGB (with bias), tanh."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "ConvTranspose2d to RGB + tanh"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "height": 8, "width": 8}
KBENCH_DTYPES = ("float32", "bfloat16")

batch_size = 384
in_channels = 256
height = 64
width = 64
out_channels = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.deconv(x))


def get_inputs():
    # Activations after a ReLU, scaled so that tanh is neither linear nor saturated throughout.
    return [torch.relu(torch.randn(batch_size, in_channels, height, width)) * 0.5]


def get_init_inputs():
    return [in_channels, out_channels]


def kbench_flops():
    inputs = batch_size * in_channels * height * width
    outputs = batch_size * out_channels * 4 * height * width
    return 2 * inputs * out_channels * 16 + 5 * outputs


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * (in_channels * 16 + 1)
    y = batch_size * out_channels * 4 * height * width
    return 4 * (x + w + y)
