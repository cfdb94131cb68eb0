"""Scalar times matrix: C = s * A, with s a 0-d tensor input of random sign and magnitude in [0.5, 1.5)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Scalar times matrix"
KBENCH_SMALL = {"m": 256, "n": 1024}

m = 16384
n = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return a * s


def get_inputs():
    sign = torch.randint(0, 2, ()).float() * 2.0 - 1.0
    s = sign * (torch.rand(()) + 0.5)
    return [torch.randn(m, n), s]


def get_init_inputs():
    return []


def kbench_flops():
    return m * n


def kbench_bytes():
    return 4 * (2 * m * n + 1)
