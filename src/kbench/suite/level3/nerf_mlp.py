"""NeRF MLP: sinusoidal encoding of points and view directions, 8-layer trunk with a skip, density and colour heads."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "NeRF MLP"
KBENCH_SMALL = {"num_points": 64, "width": 32}
# float32 only: a high-frequency encoding of coordinates rounded to bfloat16
# (2^-9 relative) changes sin(2^9 x) by order 1.
KBENCH_DTYPES = ("float32",)

num_points = 131072
width = 256
pos_freqs = 10
dir_freqs = 4


def encode(x: torch.Tensor, num_freqs: int) -> torch.Tensor:
    # Powers of two scale exactly in floating point; no pi factor, so the
    # arguments of sin/cos are exact in every dtype.
    scales = 2.0 ** torch.arange(num_freqs, dtype=x.dtype, device=x.device)
    xs = (x[..., None, :] * scales[:, None]).flatten(-2)
    return torch.cat([x, torch.sin(xs), torch.cos(xs)], dim=-1)


class Model(nn.Module):
    def __init__(self, width: int, pos_freqs: int, dir_freqs: int):
        super().__init__()
        self.pos_freqs, self.dir_freqs = pos_freqs, dir_freqs
        pos_dim, dir_dim = 3 + 6 * pos_freqs, 3 + 6 * dir_freqs
        ins = [pos_dim, width, width, width, width + pos_dim, width, width, width]
        self.trunk = nn.ModuleList(nn.Linear(i, width) for i in ins)
        self.sigma = nn.Linear(width, 1)
        self.feature = nn.Linear(width, width)
        self.view = nn.Linear(width + dir_dim, width // 2)
        self.rgb = nn.Linear(width // 2, 3)
        for layer in list(self.trunk) + [self.view]:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")

    def forward(self, points: torch.Tensor, dirs: torch.Tensor) -> torch.Tensor:
        p = encode(points, self.pos_freqs)
        h = p
        for i, layer in enumerate(self.trunk):
            if i == 4:
                h = torch.cat([h, p], dim=-1)
            h = F.relu(layer(h))
        sigma = F.softplus(self.sigma(h))
        v = F.relu(self.view(torch.cat([self.feature(h), encode(dirs, self.dir_freqs)], dim=-1)))
        rgb = torch.sigmoid(self.rgb(v))
        return torch.cat([rgb, sigma], dim=-1)


def get_inputs():
    points = torch.rand(num_points, 3) * 2.0 - 1.0
    dirs = F.normalize(torch.randn(num_points, 3), dim=-1)
    return [points, dirs]


def get_init_inputs():
    return [width, pos_freqs, dir_freqs]


def _macs_per_point():
    pos_dim, dir_dim = 3 + 6 * pos_freqs, 3 + 6 * dir_freqs
    trunk = pos_dim * width + 6 * width * width + (width + pos_dim) * width
    return trunk + width + width * width + (width + dir_dim) * (width // 2) + (width // 2) * 3


def kbench_flops():
    encode_ops = 3 * (pos_freqs + dir_freqs) * 2 * 8
    return num_points * (2 * _macs_per_point() + 10 * width + encode_ops)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (num_points * (3 + 3 + 4) + params)
