"""Mamba's short convolution: causal depthwise 1-D convolution (width 4, left padding, with bias) over the sequence, then SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Causal depthwise Conv1d + SiLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 32, "seq_len": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.01, "rtol": 0.02}}

batch_size = 32
channels = 4096
seq_len = 2048
kernel_size = 4


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(
            channels, channels, kernel_size, groups=channels, padding=kernel_size - 1
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, channels, seq_len); keep the first seq_len outputs (causal)
        return F.silu(self.conv(x)[..., : x.shape[-1]])


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    outputs = batch_size * channels * seq_len
    return outputs * (2 * kernel_size + 1 + 5)


def kbench_bytes():
    x = batch_size * channels * seq_len
    w = channels * (kernel_size + 1)
    return 4 * (2 * x + w)
