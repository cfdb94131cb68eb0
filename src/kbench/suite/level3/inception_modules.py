"""Two GoogLeNet Inception modules (1x1; 1x1-3x3; 1x1-5x5; 3x3 max-pool-1x1 branches, BN with batch statistics, concatenated) and a max-pool."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Inception modules (3a, 3b)"
KBENCH_SMALL = {"batch_size": 2, "width": 2, "image_size": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.044 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
# float32: 0.05 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.1, "rtol": 0.1}, "float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 128
width = 16  # GoogLeNet's channel counts are multiples of 16
image_size = 28

# Branch widths in multiples of `width`: 1x1, (3x3 reduce, 3x3), (5x5 reduce, 5x5), pool projection.
MODULE_3A = (4, 6, 8, 1, 2, 2)
MODULE_3B = (8, 8, 12, 2, 6, 4)


def conv_bn(cin: int, cout: int, kernel: int) -> nn.Sequential:
    bn = nn.BatchNorm2d(cout)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False), bn, nn.ReLU())


class Inception(nn.Module):
    def __init__(self, cin: int, widths, unit: int):
        super().__init__()
        c1, r3, c3, r5, c5, cp = (w * unit for w in widths)
        self.b1 = conv_bn(cin, c1, 1)
        self.b3 = nn.Sequential(conv_bn(cin, r3, 1), conv_bn(r3, c3, 3))
        self.b5 = nn.Sequential(conv_bn(cin, r5, 1), conv_bn(r5, c5, 5))
        self.bp = conv_bn(cin, cp, 1)
        self.out_channels = c1 + c3 + c5 + cp

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pooled = F.max_pool2d(x, 3, stride=1, padding=1)
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(pooled)], dim=1)


class Model(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.a = Inception(12 * width, MODULE_3A, width)
        self.b = Inception(self.a.out_channels, MODULE_3B, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(self.b(self.a(x)), 3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(batch_size, 12 * width, image_size, image_size)]


def get_init_inputs():
    return [width]


def _module_flops(cin, widths):
    c1, r3, c3, r5, c5, cp = (w * width for w in widths)
    macs = cin * (c1 + r3 + r5 + cp) + 9 * r3 * c3 + 25 * r5 * c5
    return 2 * macs + 10 * (c1 + r3 + c3 + r5 + c5 + cp) + 9 * cin, c1 + c3 + c5 + cp


def kbench_flops():
    fa, ca = _module_flops(12 * width, MODULE_3A)
    fb, cb = _module_flops(ca, MODULE_3B)
    return batch_size * (image_size ** 2 * (fa + fb) + (image_size // 2) ** 2 * 9 * cb)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    cb = sum(w * width for i, w in enumerate(MODULE_3B) if i in (0, 2, 4, 5))
    out = batch_size * cb * ((image_size + 1) // 2) ** 2
    return 4 * (batch_size * 12 * width * image_size ** 2 + params + out)
