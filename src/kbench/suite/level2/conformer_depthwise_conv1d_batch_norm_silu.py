"""Conformer convolution module middle: depthwise 1-D convolution (width 31, same padding), BatchNorm1d with batch statistics (random affine), SiLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Depthwise Conv1d + BatchNorm + SiLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "seq_len": 128}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.55 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.014, "rtol": 0.028}}

batch_size = 128
channels = 512
seq_len = 2048
kernel_size = 31


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(
            channels, channels, kernel_size, padding=kernel_size // 2, groups=channels
        )
        self.norm = nn.BatchNorm1d(channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    outputs = batch_size * channels * seq_len
    return outputs * (2 * kernel_size + 1 + 10 + 5)


def kbench_bytes():
    x = batch_size * channels * seq_len
    w = channels * (kernel_size + 3)
    return 4 * (2 * x + w)
