"""Whole-tensor Frobenius-norm normalisation rescaled by sqrt(numel), x * sqrt(n) / ||x||_F; planes have log-normal scales so the norm varies by seed."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Frobenius norm normalisation"
KBENCH_SMALL = {"batch_size": 2, "channels": 8, "height": 32, "width": 32}

batch_size = 32
channels = 64
height = 512
width = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Without the sqrt(numel) factor every element would be ~1/sqrt(n),
        # small enough for an all-zero output to pass the tolerance.
        scale = x.numel() ** 0.5 / torch.linalg.vector_norm(x)
        return x * scale


def get_inputs():
    # Log-normal per-plane scales: the norm differs from seed to seed (a fixed
    # guess of it fails) and depends on every plane, while the rescaled output
    # stays of order 0.1-1 almost everywhere.
    x = torch.randn(batch_size, channels, height, width)
    x.mul_(torch.exp(torch.randn(batch_size, channels, 1, 1)))
    return [x]


def get_init_inputs():
    return []


def kbench_flops():
    return 3 * batch_size * channels * height * width


def kbench_bytes():
    return 2 * 4 * batch_size * channels * height * width
