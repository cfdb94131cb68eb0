"""1-D convolution (kernel 5, stride 1, 'same' padding, no bias) over long sequences."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "1-D convolution"
KBENCH_SMALL = {"batch_size": 4, "in_channels": 8, "out_channels": 16, "length": 256}

batch_size = 16
in_channels = 128
out_channels = 128
length = 32768
kernel_size = 5


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(
            in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


def kbench_flops():
    return 2 * batch_size * out_channels * length * in_channels * kernel_size


def kbench_bytes():
    x = batch_size * in_channels * length
    w = out_channels * in_channels * kernel_size
    y = batch_size * out_channels * length
    return 4 * (x + w + y)
