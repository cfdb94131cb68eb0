"""Temporal convolutional network: residual blocks of two dilated causal 1-D convolutions (dilation doubling per block) with ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Temporal convolutional network"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "channels": 16, "seq_len": 128}
# float32 only: in bfloat16 twelve unnormalised convolutions on a growing residual stream put errors of up to 0.17 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)
# float32: 0.076 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 8
in_channels = 64
channels = 256
seq_len = 4096
kernel_size = 3
num_blocks = 6


class TemporalBlock(nn.Module):
    def __init__(self, cin: int, cout: int, kernel_size: int, dilation: int):
        super().__init__()
        self.pad = (kernel_size - 1) * dilation
        self.conv1 = nn.Conv1d(cin, cout, kernel_size, dilation=dilation)
        self.conv2 = nn.Conv1d(cout, cout, kernel_size, dilation=dilation)
        nn.init.kaiming_normal_(self.conv1.weight, nonlinearity="relu")
        nn.init.kaiming_normal_(self.conv2.weight, nonlinearity="relu")
        self.shortcut = nn.Conv1d(cin, cout, 1) if cin != cout else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.conv1(F.pad(x, (self.pad, 0))))  # left padding only: causal
        out = F.relu(self.conv2(F.pad(out, (self.pad, 0))))
        return F.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class Model(nn.Module):
    def __init__(self, in_channels: int, channels: int, kernel_size: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(
            *[TemporalBlock(in_channels if i == 0 else channels, channels, kernel_size, 2 ** i) for i in range(num_blocks)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, seq_len)]


def get_init_inputs():
    return [in_channels, channels, kernel_size, num_blocks]


def kbench_flops():
    first = 2 * seq_len * channels * (kernel_size * in_channels + kernel_size * channels + in_channels)
    rest = 2 * seq_len * channels * 2 * kernel_size * channels
    return batch_size * (first + (num_blocks - 1) * rest + num_blocks * 6 * seq_len * channels)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * seq_len * (in_channels + channels) + params)
