"""ConvNeXt block, first half: depthwise 7x7 convolution, channels-last LayerNorm (random affine), pointwise Linear to 4x the channels, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Depthwise Conv2d + LayerNorm + Linear + GELU"
KBENCH_SMALL = {"batch_size": 2, "dim": 16, "height": 8, "width": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.55 of atol 0.01, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.014, "rtol": 0.028}}

batch_size = 64
dim = 128
height = 56
width = 56
kernel_size = 7


class Model(nn.Module):
    def __init__(self, dim: int, kernel_size: int):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv = nn.Linear(dim, 4 * dim)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, dim, height, width) -> (batch, height, width, 4 * dim)
        h = self.dwconv(x).permute(0, 2, 3, 1)
        return F.gelu(self.pwconv(self.norm(h)))


def get_inputs():
    return [torch.randn(batch_size, dim, height, width)]


def get_init_inputs():
    return [dim, kernel_size]


def kbench_flops():
    pixels = batch_size * height * width
    return (
        pixels * dim * (2 * kernel_size * kernel_size + 1 + 8 + 2 * 4 * dim) + pixels * 4 * dim * 9
    )


def kbench_bytes():
    x = batch_size * dim * height * width
    w = dim * (kernel_size * kernel_size + 1) + 2 * dim + 4 * dim * (dim + 1)
    y = batch_size * height * width * 4 * dim
    return 4 * (x + w + y)
