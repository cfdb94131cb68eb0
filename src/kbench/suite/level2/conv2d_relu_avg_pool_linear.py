"""Small CNN classifier end: 3x3 convolution, ReLU, global average pooling, Linear to 1000 classes."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv2d + ReLU + global average pool + Linear"
KBENCH_SMALL = {
    "batch_size": 2,
    "in_channels": 8,
    "out_channels": 16,
    "height": 8,
    "width": 8,
    "num_classes": 10,
}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.42 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 768}}

batch_size = 128
in_channels = 128
out_channels = 256
height = 32
width = 32
num_classes = 1000
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, num_classes: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.fc = nn.Linear(out_channels, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    x.add_(torch.randn(batch_size, in_channels, 1, 1))
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_classes]


def kbench_flops():
    outputs = batch_size * out_channels * height * width
    return (
        outputs * (2 * in_channels * kernel_size * kernel_size + 3)
        + 2 * batch_size * num_classes * out_channels
    )


def kbench_bytes():
    x = batch_size * in_channels * height * width
    w = out_channels * (in_channels * kernel_size * kernel_size + 1) + num_classes * (
        out_channels + 1
    )
    return 4 * (x + w + batch_size * num_classes)
