"""nn.MultiheadAttention self-attention over padded sequences: a boolean key-padding mask (an input) hides each sequence's padding."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "nn.MultiheadAttention with key padding mask"
KBENCH_SMALL = {"batch_size": 3, "seq_len": 32, "d_model": 32, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.65 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 64}}
# In bfloat16 the reference itself is off from float64 by up to 0.018 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}

batch_size = 16
seq_len = 1024
d_model = 768
num_heads = 12


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(d_model, num_heads, dropout=0.0, batch_first=True)
        with torch.no_grad():
            # query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform
            nn.init.normal_(self.attn.in_proj_weight, std=d_model ** -0.5)
            self.attn.in_proj_weight[: 2 * d_model].mul_(1.5)
            nn.init.normal_(self.attn.out_proj.weight, std=d_model ** -0.5)
            self.attn.in_proj_bias.normal_(0.0, 0.1)
            self.attn.out_proj.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        # padding: (batch, seq) bool, True where the key is padding (never the whole row)
        out, _ = self.attn(x, x, x, key_padding_mask=padding, need_weights=False)
        return out


def get_inputs():
    x = torch.randn(batch_size, seq_len, d_model)
    lengths = torch.randint(seq_len // 4, seq_len + 1, (batch_size,))
    padding = torch.arange(seq_len)[None, :] >= lengths[:, None]
    return [x, padding]


def get_init_inputs():
    return [d_model, num_heads]


def kbench_flops():
    n = batch_size * seq_len
    return 2 * n * 4 * d_model * d_model + 4 * batch_size * seq_len * seq_len * d_model + 5 * batch_size * num_heads * seq_len * seq_len


def kbench_bytes():
    return 4 * (2 * batch_size * seq_len * d_model + 4 * d_model * d_model + 4 * d_model) + batch_size * seq_len
