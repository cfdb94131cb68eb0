"""DenseNet dense block and transition: six BN-ReLU-1x1-BN-ReLU-3x3 layers each concatenating 32 new channels, then BN-ReLU-1x1 and 2x2 average pool."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "DenseNet dense block with transition"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "growth": 4, "image_size": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.011 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.03, "rtol": 0.03}}

batch_size = 32
in_channels = 64
growth = 32
num_layers = 6
image_size = 56


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.bn1 = random_norm(nn.BatchNorm2d(cin))
        self.conv1 = nn.Conv2d(cin, 4 * growth, 1, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(4 * growth))
        self.conv2 = nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False)

    def forward(self, features: list) -> torch.Tensor:
        x = torch.cat(features, dim=1)
        return self.conv2(F.relu(self.bn2(self.conv1(F.relu(self.bn1(x))))))


class Model(nn.Module):
    def __init__(self, in_channels: int, growth: int, num_layers: int):
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(in_channels + i * growth, growth) for i in range(num_layers))
        total = in_channels + num_layers * growth
        self.transition_bn = random_norm(nn.BatchNorm2d(total))
        self.transition_conv = nn.Conv2d(total, total // 2, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        out = self.transition_conv(F.relu(self.transition_bn(torch.cat(features, dim=1))))
        return F.avg_pool2d(out, 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, growth, num_layers]


def kbench_flops():
    hw, total = image_size ** 2, 0
    for i in range(num_layers):
        cin = in_channels + i * growth
        total += hw * (2 * cin * 4 * growth + 2 * 9 * 4 * growth * growth + 11 * (cin + 4 * growth))
    c = in_channels + num_layers * growth
    total += hw * (2 * c * (c // 2) + 11 * c + c // 2)
    return batch_size * total


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    c = in_channels + num_layers * growth
    return 4 * (batch_size * image_size ** 2 * (in_channels + c // 8) + params)
