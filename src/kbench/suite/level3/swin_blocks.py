"""Two Swin transformer blocks: 7x7 window attention with relative position bias, then the same with windows shifted (cyclic roll and mask), each with an MLP."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Swin transformer blocks (window and shifted-window attention)"
KBENCH_SMALL = {"batch_size": 2, "resolution": 14, "dim": 16, "num_heads": 2}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.023 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.06}}

batch_size = 64
resolution = 56
dim = 96
num_heads = 3
window = 7


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


def to_windows(x: torch.Tensor, w: int) -> torch.Tensor:
    b, h, wd, c = x.shape
    x = x.view(b, h // w, w, wd // w, w, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, w * w, c)


def from_windows(x: torch.Tensor, w: int, b: int, h: int, wd: int) -> torch.Tensor:
    x = x.view(b, h // w, wd // w, w, w, -1).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h, wd, -1)


class SwinBlock(nn.Module):
    def __init__(self, dim: int, num_heads: int, window: int, shift: int, resolution: int):
        super().__init__()
        self.num_heads, self.window, self.shift, self.resolution = num_heads, window, shift, resolution
        self.norm1 = random_norm(nn.LayerNorm(dim))
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = random_norm(nn.LayerNorm(dim))
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        nn.init.normal_(self.qkv.weight, std=dim ** -0.5)
        self.bias_table = nn.Parameter(torch.randn((2 * window - 1) ** 2, num_heads) * 0.5)
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("bias_index", rel[..., 0] * (2 * window - 1) + rel[..., 1], persistent=False)
        if shift:
            # Region labels of the rolled image; tokens of different regions must not attend to each other.
            labels = torch.zeros(1, resolution, resolution, 1)
            cuts = (slice(0, -window), slice(-window, -shift), slice(-shift, None))
            region = 0
            for hs in cuts:
                for ws in cuts:
                    labels[:, hs, ws, :] = region
                    region += 1
            lab = to_windows(labels, window).squeeze(-1)
            self.register_buffer("blocked", lab[:, :, None] != lab[:, None, :], persistent=False)
        else:
            self.blocked = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        r, w, heads = self.resolution, self.window, self.num_heads
        y = self.norm1(x).view(b, r, r, c)
        if self.shift:
            y = torch.roll(y, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = to_windows(y, w)  # (b * num_windows, w*w, c)
        q, k, v = self.qkv(win).view(win.shape[0], w * w, 3, heads, c // heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) * (c // heads) ** -0.5
        scores = scores + self.bias_table[self.bias_index].permute(2, 0, 1)
        if self.blocked is not None:
            nw = self.blocked.shape[0]
            scores = scores.view(b, nw, heads, w * w, w * w).masked_fill(self.blocked[None, :, None], float("-inf"))
            scores = scores.view(b * nw, heads, w * w, w * w)
        out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(win.shape[0], w * w, c)
        y = from_windows(self.proj(out), w, b, r, r)
        if self.shift:
            y = torch.roll(y, shifts=(self.shift, self.shift), dims=(1, 2))
        x = x + y.reshape(b, n, c)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Model(nn.Module):
    def __init__(self, dim: int, num_heads: int, window: int, resolution: int):
        super().__init__()
        self.blocks = nn.Sequential(
            SwinBlock(dim, num_heads, window, 0, resolution),
            SwinBlock(dim, num_heads, window, window // 2, resolution),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, resolution * resolution, dim) tokens in row-major order
        return self.blocks(x)


def get_inputs():
    return [torch.randn(batch_size, resolution * resolution, dim)]


def get_init_inputs():
    return [dim, num_heads, window, resolution]


def kbench_flops():
    n = batch_size * resolution * resolution
    attn = 4 * n * window * window * dim + 7 * n * num_heads * window * window
    return 2 * (2 * n * 12 * dim * dim + attn + 8 * n * 4 * dim + 20 * n * dim)


def kbench_bytes():
    params = 2 * (12 * dim * dim + 13 * dim + (2 * window - 1) ** 2 * num_heads)
    return 4 * (2 * batch_size * resolution * resolution * dim + params)
