"""MLP-Mixer classifier: patch embedding, blocks of token-mixing and channel-mixing MLPs, mean pool, linear head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "MLP-Mixer"
KBENCH_SMALL = {"batch_size": 2, "image_size": 32, "patch": 8, "channels": 32, "token_hidden": 16, "channel_hidden": 64, "num_classes": 10}
KBENCH_DTYPES = ("float32", "bfloat16")

batch_size = 64
image_size = 224
patch = 16
channels = 512
token_hidden = 256
channel_hidden = 2048
depth = 4
num_classes = 1000


class MixerBlock(nn.Module):
    def __init__(self, num_tokens: int, channels: int, token_hidden: int, channel_hidden: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(channels)
        self.token_fc1 = nn.Linear(num_tokens, token_hidden)
        self.token_fc2 = nn.Linear(token_hidden, num_tokens)
        self.norm2 = nn.LayerNorm(channels)
        self.channel_fc1 = nn.Linear(channels, channel_hidden)
        self.channel_fc2 = nn.Linear(channel_hidden, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, tokens, channels)
        y = self.norm1(x).transpose(1, 2)
        y = self.token_fc2(F.gelu(self.token_fc1(y))).transpose(1, 2)
        x = x + y
        return x + self.channel_fc2(F.gelu(self.channel_fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, image_size, patch, channels, token_hidden, channel_hidden, depth, num_classes):
        super().__init__()
        num_tokens = (image_size // patch) ** 2
        self.embed = nn.Conv2d(3, channels, patch, stride=patch)
        self.blocks = nn.Sequential(
            *[MixerBlock(num_tokens, channels, token_hidden, channel_hidden) for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(channels)
        self.head = nn.Linear(channels, num_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.embed(images).flatten(2).transpose(1, 2)
        x = self.norm(self.blocks(x))
        return self.head(x.mean(dim=1))


def get_inputs():
    # Images of their own contrast and colour cast: after global pooling, i.i.d.
    # noise images would all look much alike to the classifier.
    x = torch.randn(batch_size, 3, image_size, image_size)
    return [x * (0.5 + torch.rand(batch_size, 1, 1, 1)) + 0.5 * torch.randn(batch_size, 3, 1, 1)]


def get_init_inputs():
    return [image_size, patch, channels, token_hidden, channel_hidden, depth, num_classes]


def kbench_flops():
    s = (image_size // patch) ** 2
    embed = 2 * batch_size * s * channels * 3 * patch * patch
    token = 2 * 2 * batch_size * channels * s * token_hidden
    channel = 2 * 2 * batch_size * s * channels * channel_hidden
    elementwise = batch_size * (8 * channels * token_hidden + 8 * s * channel_hidden + 20 * s * channels)
    return embed + depth * (token + channel + elementwise) + 2 * batch_size * channels * num_classes


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * 3 * image_size * image_size + params + batch_size * num_classes)
