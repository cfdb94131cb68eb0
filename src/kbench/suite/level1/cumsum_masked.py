"""Masked cumulative sum along rows of 4096: cumsum of x where a boolean mask (about half true) is set (absolute tolerance 1e-3, as for cumsum)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Masked cumulative sum"
KBENCH_SMALL = {"batch_size": 32, "length": 1024}
KBENCH_TOLERANCE = {"float32": {"atol": 1e-3, "rtol": 1e-4}}

batch_size = 131072
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    x = torch.randn(batch_size, length)
    mask = torch.rand(batch_size, length) < 0.5
    return [x, mask]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * batch_size * length


def kbench_bytes():
    # x (fp32) and mask (1 byte per bool) read, output (fp32) written.
    return (4 + 1 + 4) * batch_size * length
