"""Batch normalisation in inference mode: random running mean/variance and random affine weight/bias, inputs of std 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Batch norm (inference)"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "height": 32, "width": 32}

batch_size = 64
channels = 128
height = 256
width = 256
eps = 1e-5


class Model(nn.Module):
    def __init__(self, channels: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))
        self.register_buffer("running_mean", torch.randn(channels))
        self.register_buffer("running_var", torch.rand(channels) * 3.0 + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # training=False: the stored statistics are used and never updated.
        return F.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            training=False, eps=self.eps,
        )


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2.0]


def get_init_inputs():
    return [channels, eps]


def kbench_flops():
    return 2 * batch_size * channels * height * width


def kbench_bytes():
    return 4 * (2 * batch_size * channels * height * width + 4 * channels)
