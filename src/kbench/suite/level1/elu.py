"""ELU with alpha = 1.5 on mixed-sign inputs of std 3."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "ELU"
KBENCH_SMALL = {"batch_size": 4, "channels": 16, "length": 1024}

batch_size = 128
channels = 256
length = 16384
alpha = 1.5


class Model(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 3.0]


def get_init_inputs():
    return [alpha]


def kbench_flops():
    return 4 * batch_size * channels * length


def kbench_bytes():
    return 2 * 4 * batch_size * channels * length
