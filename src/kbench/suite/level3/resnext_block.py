"""ResNeXt bottleneck blocks (cardinality 32): 1x1 conv, grouped 3x3 conv, 1x1 conv, each with BN (batch statistics), identity shortcuts."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "ResNeXt bottleneck blocks (32x4d)"
KBENCH_SMALL = {"batch_size": 2, "channels": 32, "group_width": 2, "cardinality": 4, "image_size": 8}
# float32 only: in bfloat16 six batch-normalised layers (grouped convolutions) put errors of up to 0.09 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)

batch_size = 64
channels = 256
cardinality = 32
group_width = 4
image_size = 56
num_blocks = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class ResNeXtBlock(nn.Module):
    def __init__(self, channels: int, cardinality: int, group_width: int):
        super().__init__()
        mid = cardinality * group_width
        self.conv1 = nn.Conv2d(channels, mid, 1, bias=False)
        self.bn1 = random_norm(nn.BatchNorm2d(mid))
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, groups=cardinality, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(mid))
        self.conv3 = nn.Conv2d(mid, channels, 1, bias=False)
        self.bn3 = random_norm(nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        return F.relu(x + self.bn3(self.conv3(out)))


class Model(nn.Module):
    def __init__(self, channels: int, cardinality: int, group_width: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[ResNeXtBlock(channels, cardinality, group_width) for _ in range(num_blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [channels, cardinality, group_width, num_blocks]


def kbench_flops():
    hw, mid = image_size ** 2, cardinality * group_width
    convs = 2 * hw * (2 * mid * channels + mid * group_width * 9)
    return batch_size * num_blocks * (convs + 10 * hw * (2 * mid + channels) + 2 * hw * channels)


def kbench_bytes():
    mid = cardinality * group_width
    params = num_blocks * (2 * mid * channels + mid * group_width * 9 + 4 * mid + 2 * channels)
    return 4 * (2 * batch_size * channels * image_size * image_size + params)
