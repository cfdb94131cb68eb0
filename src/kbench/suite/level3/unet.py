"""U-Net segmentation network: three max-pooled encoder levels of double conv/BN/ReLU, a bottleneck, and bilinear-upsampling decoder levels with skip concatenation."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "U-Net"
KBENCH_SMALL = {"batch_size": 2, "image_size": 32, "width": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.045 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.1, "rtol": 0.1}}

batch_size = 8
in_channels = 3
image_size = 256
width = 32
depth = 3
num_classes = 4


def double_conv(cin: int, cout: int) -> nn.Sequential:
    layers = []
    for c in (cin, cout):
        bn = nn.BatchNorm2d(cout)
        with torch.no_grad():
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.2)
        layers += [nn.Conv2d(c, cout, 3, padding=1, bias=False), bn, nn.ReLU()]
    return nn.Sequential(*layers)


class Model(nn.Module):
    def __init__(self, in_channels: int, width: int, depth: int, num_classes: int):
        super().__init__()
        chans = [width * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList(double_conv(in_channels if i == 0 else chans[i - 1], chans[i]) for i in range(depth))
        self.bottleneck = double_conv(chans[depth - 1], chans[depth])
        self.reduce = nn.ModuleList(nn.Conv2d(chans[i + 1], chans[i], 1) for i in reversed(range(depth)))
        self.up = nn.ModuleList(double_conv(2 * chans[i], chans[i]) for i in reversed(range(depth)))
        self.head = nn.Conv2d(width, num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottleneck(x)
        for reduce, block, skip in zip(self.reduce, self.up, reversed(skips)):
            x = reduce(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False))
            x = block(torch.cat([skip, x], dim=1))
        return self.head(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, width, depth, num_classes]


def kbench_flops():
    chans = [width * 2 ** i for i in range(depth + 1)]
    total = 0
    for i in range(depth + 1):
        hw = (image_size // 2 ** i) ** 2
        cin = in_channels if i == 0 else chans[i - 1]
        total += hw * chans[i] * (2 * 9 * (cin + chans[i]) + 20)  # encoder / bottleneck double conv
        if i < depth:
            up = 2 * chans[i + 1] * chans[i] + 8 * chans[i + 1]  # upsample + 1x1 reduce
            total += hw * (up + chans[i] * (2 * 9 * 3 * chans[i] + 20))
    return batch_size * (total + image_size ** 2 * 2 * width * num_classes)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * image_size ** 2 * (in_channels + num_classes) + params)
