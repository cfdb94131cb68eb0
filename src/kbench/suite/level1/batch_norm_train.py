"""Batch normalisation with batch statistics (training-mode formula, no running stats kept), random affine weight/bias, inputs with per-channel offsets and scales."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Batch norm (batch statistics)"
KBENCH_SMALL = {"batch_size": 4, "channels": 16, "height": 16, "width": 32}

batch_size = 32
channels = 256
height = 256
width = 256
eps = 1e-5


class Model(nn.Module):
    def __init__(self, channels: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Statistics over (batch, height, width) per channel; nothing is stored.
        return F.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=self.eps)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    x.mul_(torch.rand(1, channels, 1, 1) * 3.0 + 0.5)
    x.add_(torch.randn(1, channels, 1, 1) * 2.0)
    return [x]


def get_init_inputs():
    return [channels, eps]


def kbench_flops():
    return 7 * batch_size * channels * height * width


def kbench_bytes():
    return 4 * (2 * batch_size * channels * height * width + 2 * channels)
