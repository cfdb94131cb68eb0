"""Vision transformer classifier: 16x16 patch embedding, class token, learned position embedding, four pre-norm encoder blocks, class-token head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Vision transformer (ViT) classifier"
KBENCH_SMALL = {"batch_size": 2, "image_size": 32, "patch": 8, "dim": 32, "num_heads": 4, "num_classes": 10}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.013 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 64
image_size = 224
patch = 16
dim = 384
depth = 4
num_heads = 6
num_classes = 1000


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class Block(nn.Module):
    def __init__(self, dim: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.norm1 = random_norm(nn.LayerNorm(dim, eps=1e-6))
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = random_norm(nn.LayerNorm(dim, eps=1e-6))
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        nn.init.normal_(self.qkv.weight, std=dim ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.num_heads, d // self.num_heads).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, image_size, patch, dim, depth, num_heads, num_classes):
        super().__init__()
        num_patches = (image_size // patch) ** 2
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.5)
        self.pos = nn.Parameter(torch.randn(1, num_patches + 1, dim) * 0.5)
        self.blocks = nn.Sequential(*[Block(dim, num_heads) for _ in range(depth)])
        self.norm = random_norm(nn.LayerNorm(dim, eps=1e-6))
        self.head = nn.Linear(dim, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.embed(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [image_size, patch, dim, depth, num_heads, num_classes]


def kbench_flops():
    n = (image_size // patch) ** 2 + 1
    embed = 2 * (n - 1) * dim * 3 * patch * patch
    block = 2 * n * 12 * dim * dim + 4 * n * n * dim + 5 * num_heads * n * n + 8 * n * 4 * dim + 20 * n * dim
    return batch_size * (embed + depth * block + 2 * dim * num_classes)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * image_size * image_size + num_classes) + params)
