"""RMS normalisation over the last (hidden) dimension with a random weight; each row has its own scale."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "RMS norm"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 64, "hidden": 512}

batch_size = 32
seq_len = 2048
hidden = 8192


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    x.mul_(torch.rand(batch_size, seq_len, 1) * 4.0 + 0.25)
    return [x]


def get_init_inputs():
    return [hidden]


def kbench_flops():
    return 4 * batch_size * seq_len * hidden


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * hidden + hidden)
