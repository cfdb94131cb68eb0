"""wav2vec 2.0 feature encoder first layer: bias-free 1-D convolution of raw audio (width 10, stride 5) to 512 channels, GroupNorm with one group per channel (random affine), GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv1d stride 5 + GroupNorm (per channel) + GELU"
KBENCH_SMALL = {"batch_size": 2, "samples": 2000, "channels": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.73 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.019, "rtol": 0.037}}

batch_size = 16
samples = 160000
channels = 512
kernel_size = 10
stride = 5


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, stride: int):
        super().__init__()
        self.conv = nn.Conv1d(1, channels, kernel_size, stride=stride, bias=False)
        self.norm = nn.GroupNorm(channels, channels)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        # audio: (batch, 1, samples)
        return F.gelu(self.norm(self.conv(audio)))


def get_inputs():
    return [torch.randn(batch_size, 1, samples)]


def get_init_inputs():
    return [channels, kernel_size, stride]


def kbench_flops():
    frames = (samples - kernel_size) // stride + 1
    return batch_size * channels * frames * (2 * kernel_size + 8 + 9)


def kbench_bytes():
    frames = (samples - kernel_size) // stride + 1
    w = channels * kernel_size + 2 * channels
    return 4 * (batch_size * samples + w + batch_size * channels * frames)
