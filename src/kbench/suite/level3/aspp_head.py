"""DeepLab v3 segmentation head: atrous spatial pyramid pooling (1x1, three dilated 3x3, image pooling), projection, 3x3 conv, classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "DeepLab v3 ASPP head"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 16, "channels": 8, "image_size": 16, "rates": (1, 2, 3)}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.83 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 12}}
# In bfloat16 the reference itself is off from float64 by up to 0.017 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}

batch_size = 4
in_channels = 1024
channels = 256
image_size = 32
rates = (6, 12, 18)
num_classes = 21


def conv_bn_relu(cin: int, cout: int, kernel: int, dilation: int = 1) -> nn.Sequential:
    bn = nn.BatchNorm2d(cout)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0.0, 0.2)
    pad = dilation * (kernel // 2)
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, padding=pad, dilation=dilation, bias=False), bn, nn.ReLU())


class Model(nn.Module):
    def __init__(self, in_channels: int, channels: int, rates, num_classes: int):
        super().__init__()
        self.branches = nn.ModuleList(
            [conv_bn_relu(in_channels, channels, 1)] + [conv_bn_relu(in_channels, channels, 3, r) for r in rates]
        )
        self.pool_conv = nn.Conv2d(in_channels, channels, 1)
        self.project = conv_bn_relu(channels * (len(rates) + 2), channels, 1)
        self.refine = conv_bn_relu(channels, channels, 3)
        self.classifier = nn.Conv2d(channels, num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [branch(x) for branch in self.branches]
        # Image pooling branch (no BN: one value per image and channel).
        pooled = F.relu(self.pool_conv(x.mean(dim=(2, 3), keepdim=True)))
        outs.append(pooled.expand(-1, -1, x.shape[2], x.shape[3]))
        return self.classifier(self.refine(self.project(torch.cat(outs, dim=1))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, channels, rates, num_classes]


def kbench_flops():
    hw, n = image_size ** 2, len(rates)
    branches = hw * channels * (2 * in_channels * (1 + 9 * n) + 10 * (n + 1))
    pool = hw * in_channels + 2 * in_channels * channels
    tail = hw * (2 * channels * (n + 2) * channels + 2 * 9 * channels * channels + 20 * channels + 2 * channels * num_classes)
    return batch_size * (branches + pool + tail)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * image_size ** 2 * (in_channels + num_classes) + params)
