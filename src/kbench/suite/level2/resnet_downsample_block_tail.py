"""ResNet downsampling block tail: main path 3x3 stride-2 convolution + BatchNorm, shortcut 1x1 stride-2 convolution + BatchNorm (batch statistics, random affine, all bias-free), added, then ReLU."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + BatchNorm, Conv2d 1x1 + BatchNorm, add, ReLU"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 16, "width": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.54 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 304}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.55 of atol 0.08, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.11, "rtol": 0.028}}

batch_size = 64
in_channels = 128
out_channels = 256
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        self.shortcut = nn.Conv2d(in_channels, out_channels, 1, stride=2, bias=False)
        self.shortcut_norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            for norm in (self.norm, self.shortcut_norm):
                norm.weight.normal_(1.0, 0.5)
                norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.conv(x)) + self.shortcut_norm(self.shortcut(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


def kbench_flops():
    outputs = batch_size * out_channels * (height // 2) * (width // 2)
    return outputs * (2 * in_channels * (9 + 1) + 22)


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * in_channels * (9 + 1) + 4 * out_channels
    y = batch_size * out_channels * (height // 2) * (width // 2)
    return 4 * (x + w + y)
