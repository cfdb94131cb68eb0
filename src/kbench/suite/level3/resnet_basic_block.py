"""ResNet basic block with a strided projection shortcut: two 3x3 conv/BN layers (batch statistics), residual add, ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "ResNet basic block (downsampling)"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "image_size": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.04 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.1, "rtol": 0.1}}

batch_size = 64
in_channels = 64
out_channels = 128
image_size = 112
stride = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = random_norm(nn.BatchNorm2d(out_channels))
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(out_channels))
        self.down_conv = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
        self.down_bn = random_norm(nn.BatchNorm2d(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.down_bn(self.down_conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels, stride]


def kbench_flops():
    hw = (image_size // stride) ** 2
    convs = 2 * hw * out_channels * (9 * in_channels + 9 * out_channels + in_channels)
    return batch_size * (convs + 3 * 10 * hw * out_channels)


def kbench_bytes():
    weights = out_channels * (9 * in_channels + 9 * out_channels + in_channels) + 6 * out_channels
    out = batch_size * out_channels * (image_size // stride) ** 2
    return 4 * (batch_size * in_channels * image_size * image_size + weights + out)
