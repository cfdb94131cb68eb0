"""Layer normalisation over the last (hidden) dimension with random weight/bias; each row has its own scale and offset."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Layer norm"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 64, "hidden": 512}

batch_size = 16
seq_len = 4096
hidden = 8192


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden))
            self.norm.bias.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden)
    x.mul_(torch.rand(batch_size, seq_len, 1) * 3.0 + 0.5)
    x.add_(torch.randn(batch_size, seq_len, 1) * 3.0)
    return [x]


def get_init_inputs():
    return [hidden]


def kbench_flops():
    return 8 * batch_size * seq_len * hidden


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * hidden + 2 * hidden)
