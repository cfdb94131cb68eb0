"""Group normalisation (16 groups of 8 channels) with random affine weight/bias; each channel plane has its own scale and offset."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Group norm"
KBENCH_SMALL = {"batch_size": 2, "channels": 128, "height": 16, "width": 16}

batch_size = 64
channels = 128
height = 256
width = 256
num_groups = 16


class Model(nn.Module):
    def __init__(self, num_groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels, eps=1e-5, affine=True)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(channels))
            self.norm.bias.copy_(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    x.mul_(torch.rand(batch_size, channels, 1, 1) * 2.0 + 0.5)
    x.add_(torch.randn(batch_size, channels, 1, 1))
    return [x]


def get_init_inputs():
    return [num_groups, channels]


def kbench_flops():
    return 8 * batch_size * channels * height * width


def kbench_bytes():
    return 4 * (2 * batch_size * channels * height * width + 2 * channels)
