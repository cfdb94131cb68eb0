"""MelGAN discriminator layer: grouped 1-D convolution (width 41, stride 4, 16 groups), LeakyReLU(0.2)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Grouped Conv1d stride 4 + LeakyReLU"
KBENCH_SMALL = {"batch_size": 2, "channels": 32, "seq_len": 512, "groups": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.51 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.013, "rtol": 0.013}}
# bf16 at the fp32 size ran 0.999 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.71 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 48}}

batch_size = 16
channels = 256
seq_len = 32768
groups = 16
kernel_size = 41
stride = 4


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, stride: int, groups: int):
        super().__init__()
        self.conv = nn.Conv1d(
            channels, channels, kernel_size, stride=stride, padding=kernel_size // 2, groups=groups
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(self.conv(x), 0.2)


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size, stride, groups]


def kbench_flops():
    frames = (seq_len + 2 * (kernel_size // 2) - kernel_size) // stride + 1
    return batch_size * channels * frames * (2 * (channels // groups) * kernel_size + 3)


def kbench_bytes():
    frames = (seq_len + 2 * (kernel_size // 2) - kernel_size) // stride + 1
    w = channels * ((channels // groups) * kernel_size + 1)
    return 4 * (batch_size * channels * (seq_len + frames) + w)
