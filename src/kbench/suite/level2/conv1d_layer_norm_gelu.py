"""wav2vec 2.0 feature encoder layer (layer-norm variant): bias-free 1-D convolution (width 3, stride 2), LayerNorm over the channels at each frame (random affine), GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv1d stride 2 + LayerNorm over channels + GELU"
KBENCH_SMALL = {"batch_size": 2, "channels": 32, "seq_len": 128}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.77 ms eager on the H200 (2026-11-29), under the audit's 1 ms floor;
# this size, scaled from that time, measured 2.02 ms (audit 2026-11-30).
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 48}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.57 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.015, "rtol": 0.029}}

batch_size = 16
channels = 512
seq_len = 8192
kernel_size = 3
stride = 2


class Model(nn.Module):
    def __init__(self, channels: int, kernel_size: int, stride: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, stride=stride, bias=False)
        self.norm = nn.LayerNorm(channels)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(self.conv(x).transpose(1, 2)).transpose(1, 2)
        return F.gelu(h)


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size, stride]


def kbench_flops():
    frames = (seq_len - kernel_size) // stride + 1
    return batch_size * channels * frames * (2 * channels * kernel_size + 8 + 9)


def kbench_bytes():
    frames = (seq_len - kernel_size) // stride + 1
    w = channels * channels * kernel_size + 2 * channels
    return 4 * (batch_size * channels * (seq_len + frames) + w)
