"""WaveNet residual layer: dilated causal 1-D convolution to filter and gate halves, tanh(filter) * sigmoid(gate), 1x1 convolution, plus the layer input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Dilated causal Conv1d + gated tanh/sigmoid + Conv1d 1x1 + residual add"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "seq_len": 128}
KBENCH_DTYPES = ("float32", "bfloat16")

batch_size = 16
channels = 256
seq_len = 8192
kernel_size = 2
dilation = 8


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, dilation: int):
        super().__init__()
        self.pad = dilation * (kernel_size - 1)
        self.dilated = nn.Conv1d(channels, 2 * channels, kernel_size, dilation=dilation)
        self.out = nn.Conv1d(channels, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        filt, gate = self.dilated(F.pad(x, (self.pad, 0))).chunk(2, dim=1)
        return x + self.out(torch.tanh(filt) * torch.sigmoid(gate))


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size, dilation]


def kbench_flops():
    outputs = batch_size * channels * seq_len
    return outputs * (2 * (2 * channels * kernel_size + 1) + 10 + 2 * channels + 2)


def kbench_bytes():
    x = batch_size * channels * seq_len
    w = 2 * channels * (channels * kernel_size + 1) + channels * (channels + 1)
    return 4 * (2 * x + w)
