"""Two-layer bidirectional LSTM tagger: forward and backward passes, initial states passed in, a linear layer over the concatenated outputs."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Bidirectional LSTM tagger"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 16, "input_size": 16, "hidden_size": 16, "num_tags": 8}
# float32 only: outputs of a few hundredths to tenths sit within a few bfloat16 tolerances
# (1e-2) of zero, so bfloat16 would barely separate right from wrong.
KBENCH_DTYPES = ("float32",)

batch_size = 32
seq_len = 256
input_size = 256
hidden_size = 256
num_layers = 2
num_tags = 64


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int, num_tags: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True)
        self.tagger = nn.Linear(2 * hidden_size, num_tags)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor):
        out, (h_n, c_n) = self.lstm(x, (h0, c0))
        return self.tagger(out), h_n, c_n


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    h0 = torch.rand(2 * num_layers, batch_size, hidden_size) * 2.0 - 1.0
    c0 = torch.randn(2 * num_layers, batch_size, hidden_size)
    return [x, h0, c0]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, num_tags]


def kbench_flops():
    gates = 4 * hidden_size
    per_step = 2 * 2 * gates * (input_size + hidden_size) + (num_layers - 1) * 2 * 2 * gates * 3 * hidden_size
    return batch_size * seq_len * (per_step + 2 * num_layers * 12 * hidden_size + 2 * 2 * hidden_size * num_tags)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    acts = batch_size * seq_len * (input_size + num_tags) + 8 * num_layers * batch_size * hidden_size
    return 4 * (params + acts)
