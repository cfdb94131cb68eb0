"""EfficientNet stage: three MBConv blocks (1x1 expand, 5x5 depthwise, squeeze-excitation, SiLU, 1x1 project; BN with batch statistics), the first changing width."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "EfficientNet MBConv stage with squeeze-excitation"
KBENCH_SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 12, "image_size": 8}
# float32 only: in bfloat16 nine batch-normalised layers and gates put errors of up to 0.1 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)
# float32: 0.078 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 128
in_channels = 80
out_channels = 112
image_size = 28
expansion = 6
kernel_size = 5
num_blocks = 3


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, expansion: int, kernel_size: int):
        super().__init__()
        hidden, squeeze = cin * expansion, max(1, cin // 4)
        self.expand = nn.Conv2d(cin, hidden, 1, bias=False)
        self.bn1 = random_norm(nn.BatchNorm2d(hidden))
        self.depthwise = nn.Conv2d(hidden, hidden, kernel_size, padding=kernel_size // 2, groups=hidden, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(hidden))
        self.se_reduce = nn.Conv2d(hidden, squeeze, 1)
        self.se_expand = nn.Conv2d(squeeze, hidden, 1)
        nn.init.normal_(self.se_reduce.weight, std=hidden ** -0.5)
        nn.init.normal_(self.se_expand.weight, std=2.0 * squeeze ** -0.5)
        self.project = nn.Conv2d(hidden, cout, 1, bias=False)
        self.bn3 = random_norm(nn.BatchNorm2d(cout))
        self.residual = cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.silu(self.bn1(self.expand(x)))
        out = F.silu(self.bn2(self.depthwise(out)))
        gate = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(out.mean(dim=(2, 3), keepdim=True)))))
        out = self.bn3(self.project(out * gate))
        return x + out if self.residual else out


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, expansion: int, kernel_size: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(
            *[MBConv(in_channels if i == 0 else out_channels, out_channels, expansion, kernel_size)
              for i in range(num_blocks)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels, expansion, kernel_size, num_blocks]


def kbench_flops():
    hw, total = image_size ** 2, 0
    for i in range(num_blocks):
        cin = in_channels if i == 0 else out_channels
        hidden, squeeze = cin * expansion, max(1, cin // 4)
        total += hw * (2 * cin * hidden + 2 * kernel_size ** 2 * hidden + 2 * hidden * out_channels)
        total += hw * (30 * hidden + 12 * out_channels) + 4 * hidden * squeeze
    return batch_size * total


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    hw = image_size ** 2
    return 4 * (batch_size * hw * (in_channels + out_channels) + params)
