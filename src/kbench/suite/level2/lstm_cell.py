"""One LSTM cell step: gates = x W_ih^T + h W_hh^T + biases, then i, f, o sigmoids, g tanh, c' = f c + i g, h' = o tanh(c'); returns (h', c')."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "LSTM cell (two matmuls + gate pointwise)"
KBENCH_SMALL = {"batch_size": 32, "input_size": 32, "hidden_size": 48}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.27 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 38912}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 4096
input_size = 1024
hidden_size = 1024


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        i, f, g, o = (self.ih(x) + self.hh(h)).chunk(4, dim=-1)
        c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h_next = torch.sigmoid(o) * torch.tanh(c_next)
        return h_next, c_next


def get_inputs():
    x = torch.randn(batch_size, input_size)
    h = torch.tanh(torch.randn(batch_size, hidden_size))
    c = torch.randn(batch_size, hidden_size)
    return [x, h, c]


def get_init_inputs():
    return [input_size, hidden_size]


def kbench_flops():
    return (
        2 * batch_size * 4 * hidden_size * (input_size + hidden_size)
        + 30 * batch_size * hidden_size
    )


def kbench_bytes():
    return 4 * (
        batch_size * (input_size + 4 * hidden_size)
        + 4 * hidden_size * (input_size + hidden_size + 2)
    )
