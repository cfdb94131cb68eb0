"""Embedding lookup: int64 token ids into a random (vocab x dim) table; every row of the table is used many times."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Embedding lookup"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 512, "vocab_size": 1000, "embed_dim": 64}

batch_size = 4
seq_len = 65536
vocab_size = 32768
embed_dim = 2048


class Model(nn.Module):
    def __init__(self, vocab_size: int, embed_dim: int):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)  # weights ~ N(0, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embedding(ids)


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len), dtype=torch.int64)]


def get_init_inputs():
    return [vocab_size, embed_dim]


def kbench_flops():
    return 0


def kbench_bytes():
    # ids read, the table read once (8 lookups per row on average), output written.
    return 8 * batch_size * seq_len + 4 * vocab_size * embed_dim + 4 * batch_size * seq_len * embed_dim
