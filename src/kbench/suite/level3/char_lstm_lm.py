"""LSTM language model: token embedding, one LSTM layer with initial states passed in, and a linear layer to vocabulary logits."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "LSTM language model"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 16, "vocab_size": 64, "embed_dim": 16, "hidden_size": 32}
# float32 only: outputs of a few hundredths to tenths sit within a few bfloat16 tolerances
# (1e-2) of zero, so bfloat16 would barely separate right from wrong.
KBENCH_DTYPES = ("float32",)

batch_size = 32
seq_len = 256
vocab_size = 8192
embed_dim = 512
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)
        nn.init.normal_(self.head.weight, std=hidden_size ** -0.5 * 2.0)

    def forward(self, tokens: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor):
        out, (h_n, c_n) = self.lstm(self.embed(tokens), (h0, c0))
        return self.head(out), h_n, c_n


def get_inputs():
    tokens = torch.randint(0, vocab_size, (batch_size, seq_len))
    h0 = torch.rand(1, batch_size, hidden_size) * 2.0 - 1.0
    c0 = torch.randn(1, batch_size, hidden_size)
    return [tokens, h0, c0]


def get_init_inputs():
    return [vocab_size, embed_dim, hidden_size]


def kbench_flops():
    lstm = 2 * 4 * hidden_size * (embed_dim + hidden_size) + 12 * hidden_size
    return batch_size * seq_len * (lstm + 2 * hidden_size * vocab_size)


def kbench_bytes():
    tokens = batch_size * seq_len
    weights = 4 * hidden_size * (embed_dim + hidden_size + 2) + vocab_size * (hidden_size + 1)
    return 4 * (tokens * embed_dim + weights + tokens * vocab_size + 4 * batch_size * hidden_size) + 8 * tokens
