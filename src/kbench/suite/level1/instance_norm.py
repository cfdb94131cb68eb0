"""Instance normalisation (per sample and channel over height x width) with random affine weight/bias; each (sample, channel) plane has its own scale and offset."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Instance norm"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "height": 32, "width": 32}

batch_size = 32
channels = 64
height = 512
width = 512


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, eps=1e-5, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(channels))
            self.norm.bias.copy_(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    x.mul_(torch.rand(batch_size, channels, 1, 1) * 3.0 + 0.5)
    x.add_(torch.randn(batch_size, channels, 1, 1) * 2.0)
    return [x]


def get_init_inputs():
    return [channels]


def kbench_flops():
    return 8 * batch_size * channels * height * width


def kbench_bytes():
    return 4 * (2 * batch_size * channels * height * width + 2 * channels)
