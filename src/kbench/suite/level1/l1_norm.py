"""L1 normalisation over the 64 channels (dim 1, strided) of a (batch, 64, length) tensor: x / sum |x| (outputs of order 1e-2)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "L1 normalisation"
KBENCH_SMALL = {"batch_size": 4, "channels": 64, "length": 1024}

batch_size = 256
channels = 64
length = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=1.0, dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []


def kbench_flops():
    return 3 * batch_size * channels * length


def kbench_bytes():
    return 2 * 4 * batch_size * channels * length
