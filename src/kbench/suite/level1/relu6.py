"""ReLU6 (clamp to [0, 6]) on inputs of std 4, so values below 0 and above 6 both occur often."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "ReLU6"
KBENCH_SMALL = {"batch_size": 16, "dim": 4096}

batch_size = 16384
dim = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(x)


def get_inputs():
    return [torch.randn(batch_size, dim) * 4.0]


def get_init_inputs():
    return []


def kbench_flops():
    return 2 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim
