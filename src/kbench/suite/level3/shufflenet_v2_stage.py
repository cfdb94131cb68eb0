"""ShuffleNet v2 stage: a strided two-branch unit, then units that split channels, transform one half (1x1, 3x3 depthwise, 1x1) and shuffle."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "ShuffleNet v2 stage"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "image_size": 16}
# float32 only: in bfloat16 fourteen batch-normalised layers put errors of up to 0.09 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)

batch_size = 128
in_channels = 116
out_channels = 232
image_size = 56
num_units = 4


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, relu: bool = True) -> nn.Sequential:
    bn = nn.BatchNorm2d(cout)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    layers = [nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups, bias=False), bn]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


class Unit(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.stride = stride
        half = cout // 2
        branch_in = cin if stride == 2 else half
        self.branch = nn.Sequential(
            conv_bn(branch_in, half, 1),
            conv_bn(half, half, 3, stride, groups=half, relu=False),
            conv_bn(half, half, 1),
        )
        if stride == 2:
            self.shortcut = nn.Sequential(conv_bn(cin, cin, 3, stride, groups=cin, relu=False), conv_bn(cin, half, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride == 2:
            out = torch.cat([self.shortcut(x), self.branch(x)], dim=1)
        else:
            keep, change = x.chunk(2, dim=1)
            out = torch.cat([keep, self.branch(change)], dim=1)
        return channel_shuffle(out, 2)


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, num_units: int):
        super().__init__()
        self.units = nn.Sequential(
            *[Unit(in_channels if i == 0 else out_channels, out_channels, 2 if i == 0 else 1) for i in range(num_units)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.units(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels, num_units]


def kbench_flops():
    hw_in, hw = image_size ** 2, (image_size // 2) ** 2
    half = out_channels // 2
    first = hw_in * half * (2 * in_channels + 10) + hw * (half * (2 * 9 + 8) + half * (2 * half + 10))
    first += hw * (in_channels * (2 * 9 + 8) + half * (2 * in_channels + 10))
    rest = hw * (half * (2 * half + 10) * 2 + half * (2 * 9 + 8))
    return batch_size * (first + (num_units - 1) * rest)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    out = batch_size * out_channels * (image_size // 2) ** 2
    return 4 * (batch_size * in_channels * image_size ** 2 + params + out)
