"""torch.nn.functional.scaled_dot_product_attention, non-causal, no mask; queries scaled so scores have std 2."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Scaled dot-product attention"
KBENCH_SMALL = {"batch_size": 1, "num_heads": 2, "seq_len": 256, "head_dim": 64}

batch_size = 2
num_heads = 16
seq_len = 4096
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape) * 2.0, torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * num_heads * seq_len * seq_len * head_dim + 5 * batch_size * num_heads * seq_len * seq_len


def kbench_bytes():
    return 4 * 4 * batch_size * num_heads * seq_len * head_dim
