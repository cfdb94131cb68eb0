"""R(2+1)D video residual blocks: each 3x3x3 convolution factored into a spatial 1x3x3 and a temporal 3x1x1 conv, BN (batch statistics) and ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "R(2+1)D video residual blocks"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "frames": 4, "image_size": 8}
# float32 only: in bfloat16 eight batch-normalised 3-D convolutions put errors of up to 0.13 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)
# float32: 0.055 of the default 1e-4 on a CPU at the default size; 2e-4 leaves room
# for the GPU's convolution and matrix-product algorithms.
KBENCH_TOLERANCE = {"float32": {"atol": 2e-4, "rtol": 2e-4}}

batch_size = 4
channels = 64
frames = 16
image_size = 56
num_blocks = 2


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class Conv2Plus1D(nn.Sequential):
    def __init__(self, cin: int, cout: int):
        # Middle width as in the paper: parameters match a full 3x3x3 conv.
        mid = (27 * cin * cout) // (9 * cin + 3 * cout)
        super().__init__(
            nn.Conv3d(cin, mid, (1, 3, 3), padding=(0, 1, 1), bias=False),
            random_norm(nn.BatchNorm3d(mid)),
            nn.ReLU(),
            nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0), bias=False),
        )


class Block(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = Conv2Plus1D(channels, channels)
        self.bn1 = random_norm(nn.BatchNorm3d(channels))
        self.conv2 = Conv2Plus1D(channels, channels)
        self.bn2 = random_norm(nn.BatchNorm3d(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))


class Model(nn.Module):
    def __init__(self, channels: int, num_blocks: int):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(channels) for _ in range(num_blocks)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, channels, frames, image_size, image_size)]


def get_init_inputs():
    return [channels, num_blocks]


def kbench_flops():
    mid = (27 * channels * channels) // (9 * channels + 3 * channels)
    positions = frames * image_size * image_size
    conv = 2 * (9 * channels * mid + 3 * mid * channels) + 10 * mid
    return batch_size * num_blocks * positions * (2 * conv + 22 * channels)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (2 * batch_size * channels * frames * image_size ** 2 + params)
