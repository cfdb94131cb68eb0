"""1-D adaptive average pooling from length 65536 to 1000 (window bounds do not divide evenly; neighbouring windows overlap)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "1-D adaptive average pooling"
KBENCH_SMALL = {"batch_size": 4, "channels": 16, "length": 1000, "output_size": 96}

batch_size = 64
channels = 128
length = 65536
output_size = 1000


class Model(nn.Module):
    def __init__(self, output_size: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool1d(output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [output_size]


def kbench_flops():
    return batch_size * channels * (length + output_size)


def kbench_bytes():
    return 4 * batch_size * channels * (length + output_size)
