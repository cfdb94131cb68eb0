"""BigVGAN-style layer: 1-D convolution (width 7, same padding), then the Snake activation x + sin^2(alpha x) / alpha with a learned alpha per channel."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv1d + Snake"
KBENCH_SMALL = {"batch_size": 2, "channels": 16, "seq_len": 128}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.45 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.07 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 96}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.87 of atol 0.02, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.044, "rtol": 0.044}}

batch_size = 16
channels = 256
seq_len = 4096
kernel_size = 7


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, padding=kernel_size // 2)
        self.alpha = nn.Parameter(torch.rand(1, channels, 1) * 1.5 + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(x)
        return h + torch.sin(self.alpha * h).pow(2) / (self.alpha + 1e-9)


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len) * 2.0]


def get_init_inputs():
    return [channels, kernel_size]


def kbench_flops():
    outputs = batch_size * channels * seq_len
    return outputs * (2 * channels * kernel_size + 1 + 8)


def kbench_bytes():
    x = batch_size * channels * seq_len
    w = channels * (channels * kernel_size + 2)
    return 4 * (2 * x + w)
