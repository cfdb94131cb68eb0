"""LSTM written out step by step: one input projection for all steps, then per step a recurrent matmul, gates, cell and hidden updates (cell state kept in at least float32)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "LSTM unrolled in time"
KBENCH_SMALL = {"batch_size": 4, "seq_len": 12, "input_size": 16, "hidden_size": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.0032 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 256
seq_len = 64
input_size = 512
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.w_ih = nn.Linear(input_size, 4 * hidden_size)
        self.w_hh = nn.Linear(hidden_size, 4 * hidden_size, bias=False)
        bound = hidden_size ** -0.5
        for w in (self.w_ih.weight, self.w_hh.weight):
            nn.init.uniform_(w, -bound, bound)
        with torch.no_grad():
            self.w_ih.bias.uniform_(-bound, bound)
            self.w_ih.bias[hidden_size:2 * hidden_size] += 1.0  # forget-gate bias

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor):
        # The cell state accumulates over the steps: keep it in float32 when the model runs in bfloat16.
        acc = torch.promote_types(x.dtype, torch.float32)
        xp = self.w_ih(x)  # (batch, seq, 4 * hidden)
        h, c = h0, c0.to(acc)
        outs = []
        for t in range(x.shape[1]):
            gates = (xp[:, t] + self.w_hh(h)).to(acc)
            i, f, g, o = gates.chunk(4, dim=1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = (torch.sigmoid(o) * torch.tanh(c)).to(x.dtype)
            outs.append(h)
        return torch.stack(outs, dim=1), c.to(x.dtype)


def get_inputs():
    x = torch.randn(batch_size, seq_len, input_size)
    h0 = torch.rand(batch_size, hidden_size) * 2.0 - 1.0
    c0 = torch.randn(batch_size, hidden_size)
    return [x, h0, c0]


def get_init_inputs():
    return [input_size, hidden_size]


def kbench_flops():
    return batch_size * seq_len * (2 * 4 * hidden_size * (input_size + hidden_size) + 16 * hidden_size)


def kbench_bytes():
    weights = 4 * hidden_size * (input_size + hidden_size + 1)
    acts = batch_size * seq_len * (input_size + hidden_size) + 3 * batch_size * hidden_size
    return 4 * (weights + acts)
