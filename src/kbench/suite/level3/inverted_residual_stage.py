"""MobileNet v2 stage: four inverted-residual blocks (1x1 expand, 3x3 depthwise, ReLU6, linear 1x1 project, BN with batch statistics, skip)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "MobileNet v2 inverted-residual stage"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "image_size": 8}
# float32 only: in bfloat16 twelve batch-normalised layers put errors of up to 0.12 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)
# float32: 0.068 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 128
channels = 64
expansion = 6
image_size = 28
num_blocks = 4


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class InvertedResidual(nn.Module):
    def __init__(self, channels: int, expansion: int):
        super().__init__()
        hidden = channels * expansion
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = random_norm(nn.BatchNorm2d(hidden))
        self.depthwise = nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(hidden))
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn3 = random_norm(nn.BatchNorm2d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu6(self.bn1(self.expand(x)))
        out = F.relu6(self.bn2(self.depthwise(out)))
        return x + self.bn3(self.project(out))


class Model(nn.Module):
    def __init__(self, channels: int, expansion: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[InvertedResidual(channels, expansion) for _ in range(num_blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [channels, expansion, num_blocks]


def kbench_flops():
    hw, hidden = image_size ** 2, channels * expansion
    per_block = hw * (2 * 2 * channels * hidden + 2 * 9 * hidden + 2 * 11 * hidden + 11 * channels)
    return batch_size * num_blocks * per_block


def kbench_bytes():
    hidden = channels * expansion
    params = num_blocks * (2 * channels * hidden + 9 * hidden + 4 * hidden + 2 * channels)
    return 4 * (2 * batch_size * channels * image_size * image_size + params)
