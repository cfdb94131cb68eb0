"""Wide-ResNet stage: pre-activation basic blocks (BN, ReLU, 3x3 conv, twice) at width 320, the first strided with a 1x1 projection."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Wide-ResNet pre-activation stage"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "image_size": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 1.00 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 160}}
# In bfloat16 the reference itself is off from float64 by up to 0.025 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.06}}

batch_size = 64
in_channels = 160
out_channels = 320
image_size = 32
num_blocks = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class PreActBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.bn1 = random_norm(nn.BatchNorm2d(cin))
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(cout))
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pre = F.relu(self.bn1(x))
        out = self.conv1(pre)
        out = self.conv2(F.relu(self.bn2(out)))
        return out + (x if self.shortcut is None else self.shortcut(pre))


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(
            *[PreActBlock(in_channels if i == 0 else out_channels, out_channels, 2 if i == 0 else 1)
              for i in range(num_blocks)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels, num_blocks]


def kbench_flops():
    hw_in, hw = image_size ** 2, (image_size // 2) ** 2
    first = 10 * hw_in * in_channels + 2 * hw * out_channels * (9 * in_channels + 9 * out_channels + in_channels) + 11 * hw * out_channels
    rest = 2 * hw * out_channels * 18 * out_channels + 21 * hw * out_channels
    return batch_size * (first + (num_blocks - 1) * rest)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    out = batch_size * out_channels * (image_size // 2) ** 2
    return 4 * (batch_size * in_channels * image_size * image_size + params + out)
