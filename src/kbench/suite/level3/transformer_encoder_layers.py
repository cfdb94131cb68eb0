"""Two nn.TransformerEncoderLayer layers (post-norm, GELU, dropout 0, batch first), each with its own weights."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Transformer encoder (nn.TransformerEncoderLayer)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 16, "d_model": 32, "nhead": 4, "dim_feedforward": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.025 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.06}}

batch_size = 4
seq_len = 1024
d_model = 1024
nhead = 16
dim_feedforward = 4096
num_layers = 2


class Model(nn.Module):
    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, num_layers: int):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0, activation="gelu", batch_first=True)
            for _ in range(num_layers)
        )
        with torch.no_grad():
            for layer in self.layers:
                # Sharper attention than the default init gives: query/key entries of
                # about unit size, so the scores spread over a few units.
                nn.init.normal_(layer.self_attn.in_proj_weight, std=d_model ** -0.5)
                for norm in (layer.norm1, layer.norm2):
                    norm.weight.uniform_(0.5, 1.5)
                    norm.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, nhead, dim_feedforward, num_layers]


def kbench_flops():
    n = batch_size * seq_len
    proj = 2 * n * 4 * d_model * d_model
    attn = 4 * batch_size * seq_len * seq_len * d_model + 5 * batch_size * nhead * seq_len * seq_len
    ffn = 2 * 2 * n * d_model * dim_feedforward + 8 * n * dim_feedforward
    return num_layers * (proj + attn + ffn + 20 * n * d_model)


def kbench_bytes():
    params = num_layers * (4 * d_model * d_model + 2 * d_model * dim_feedforward + 9 * d_model + dim_feedforward)
    return 4 * (2 * batch_size * seq_len * d_model + params)
