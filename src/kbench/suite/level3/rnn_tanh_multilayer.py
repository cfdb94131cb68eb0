"""Three-layer Elman RNN (tanh) over a sequence, initial hidden state passed in; returns every output and the final hidden states."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Multi-layer tanh RNN"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 16, "input_size": 16, "hidden_size": 32}
# float32 only: outputs of a few hundredths to tenths sit within a few bfloat16 tolerances
# (1e-2) of zero, so bfloat16 would barely separate right from wrong.
KBENCH_DTYPES = ("float32",)

batch_size = 64
seq_len = 320  # 512 took 23.6 ms eager on the H200 (over the 20 ms ceiling); time grows with the steps
input_size = 256
hidden_size = 512
num_layers = 3


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size, num_layers, nonlinearity="tanh", batch_first=True)

    def forward(self, x: torch.Tensor, h0: torch.Tensor):
        out, h_n = self.rnn(x, h0)
        return out, h_n


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    h0 = torch.rand(num_layers, batch_size, hidden_size) * 2.0 - 1.0
    return [x, h0]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]


def kbench_flops():
    per_step = 2 * hidden_size * (input_size + hidden_size) + 2 * hidden_size * 2 * hidden_size * (num_layers - 1)
    return batch_size * seq_len * (per_step + num_layers * 6 * hidden_size)


def kbench_bytes():
    weights = hidden_size * (input_size + hidden_size) + (num_layers - 1) * 2 * hidden_size * hidden_size + num_layers * 2 * hidden_size
    acts = batch_size * seq_len * (input_size + hidden_size) + 2 * num_layers * batch_size * hidden_size
    return 4 * (weights + acts)
