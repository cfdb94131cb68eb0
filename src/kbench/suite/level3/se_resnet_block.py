"""SE-ResNet bottleneck block: 1x1/3x3/1x1 conv with BN (batch statistics), squeeze-and-excitation channel gating, residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Squeeze-and-excitation ResNet block"
KBENCH_SMALL = {"batch_size": 2, "channels": 32, "mid_channels": 8, "image_size": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.047 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.1, "rtol": 0.1}}

batch_size = 64
channels = 256
mid_channels = 64
image_size = 56
reduction = 16
num_blocks = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class SEBottleneck(nn.Module):
    def __init__(self, channels: int, mid: int, reduction: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, mid, 1, bias=False)
        self.bn1 = random_norm(nn.BatchNorm2d(mid))
        self.conv2 = nn.Conv2d(mid, mid, 3, padding=1, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(mid))
        self.conv3 = nn.Conv2d(mid, channels, 1, bias=False)
        self.bn3 = random_norm(nn.BatchNorm2d(channels))
        self.se_reduce = nn.Linear(channels, channels // reduction)
        self.se_expand = nn.Linear(channels // reduction, channels)
        nn.init.kaiming_normal_(self.se_reduce.weight, nonlinearity="relu")
        nn.init.normal_(self.se_expand.weight, std=(channels // reduction) ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        gate = torch.sigmoid(self.se_expand(F.relu(self.se_reduce(out.mean(dim=(2, 3))))))
        return F.relu(x + out * gate[:, :, None, None])


class Model(nn.Module):
    def __init__(self, channels: int, mid_channels: int, reduction: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[SEBottleneck(channels, mid_channels, reduction) for _ in range(num_blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [channels, mid_channels, reduction, num_blocks]


def kbench_flops():
    hw, mid = image_size ** 2, mid_channels
    convs = 2 * hw * (2 * mid * channels + 9 * mid * mid)
    se = 4 * channels * (channels // reduction) + hw * channels
    return batch_size * num_blocks * (convs + se + 10 * hw * (2 * mid + channels) + 4 * hw * channels)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (2 * batch_size * channels * image_size * image_size + params)
