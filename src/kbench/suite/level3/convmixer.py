"""ConvMixer classifier: patch-embedding conv, blocks of residual 9x9 depthwise conv and 1x1 conv (each GELU then BN with batch statistics), pooled linear head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "ConvMixer"
KBENCH_SMALL = {"batch_size": 2, "image_size": 32, "dim": 16, "depth": 2, "num_classes": 10}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.0042 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 64
image_size = 224
patch = 8
dim = 256
depth = 8
kernel_size = 9
num_classes = 1000


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class Model(nn.Module):
    def __init__(self, dim: int, depth: int, kernel_size: int, patch: int, num_classes: int):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.embed_bn = random_norm(nn.BatchNorm2d(dim))
        self.depthwise = nn.ModuleList(nn.Conv2d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim) for _ in range(depth))
        self.bn1 = nn.ModuleList(random_norm(nn.BatchNorm2d(dim)) for _ in range(depth))
        self.pointwise = nn.ModuleList(nn.Conv2d(dim, dim, 1) for _ in range(depth))
        self.bn2 = nn.ModuleList(random_norm(nn.BatchNorm2d(dim)) for _ in range(depth))
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed_bn(F.gelu(self.embed(x)))
        for dw, bn1, pw, bn2 in zip(self.depthwise, self.bn1, self.pointwise, self.bn2):
            x = x + bn1(F.gelu(dw(x)))
            x = bn2(F.gelu(pw(x)))
        return self.head(x.mean(dim=(2, 3)))


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [dim, depth, kernel_size, patch, num_classes]


def kbench_flops():
    hw = (image_size // patch) ** 2
    embed = hw * dim * (2 * 3 * patch * patch + 20)
    block = hw * dim * (2 * kernel_size ** 2 + 2 * dim + 40)
    return batch_size * (embed + depth * block + hw * dim + 2 * dim * num_classes)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * image_size * image_size + num_classes) + params)
