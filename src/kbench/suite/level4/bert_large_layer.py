"""BERT-large encoder layer (transformers BertLayer): hidden 1024, 16 heads, post-LayerNorm, GELU MLP 4096, bidirectional attention over padded sequences of 512 (padding mask from per-sequence lengths)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "BERT-large encoder layer (padded batch)"
KBENCH_REQUIRES = ("transformers",)
KBENCH_DTYPES = ("float32", "bfloat16")
# bfloat16: the reference's own error against float64 reaches about 0.027 x (1 + |output|); the tolerance
# leaves room for a correct kernel that rounds differently.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "hidden_size": 64, "num_heads": 4, "intermediate_size": 256}

batch_size = 32
seq_len = 512
hidden_size = 1024
num_heads = 16
intermediate_size = 4096


def _init_weights(module):
    """Projections N(0, 1/fan_in), so each keeps the scale of its input (queries and keys
    sqrt(2) larger: attention scores of std about 2); biases N(0, 0.1^2); LayerNorm scales N(1, 0.1^2)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 2:
                gain = 2.0 if name.endswith(("query.weight", "key.weight")) else 1.0
                p.normal_(0.0, (gain / p.shape[1]) ** 0.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__()
        from transformers import BertConfig
        from transformers.models.bert.modeling_bert import BertLayer

        config = BertConfig(
            hidden_size=hidden_size,
            num_attention_heads=num_heads,
            intermediate_size=intermediate_size,
            num_hidden_layers=1,
            hidden_act="gelu",
            layer_norm_eps=1e-12,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
        config._attn_implementation = "sdpa"
        self.layer = BertLayer(config)
        _init_weights(self.layer)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        # attention_mask: (batch, seq), 1 for real tokens and 0 for padding, made additive
        # and broadcast over heads and queries as BertModel does.
        dtype = hidden_states.dtype
        additive = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
        out = self.layer(hidden_states, attention_mask=additive)
        return out[0] if isinstance(out, tuple) else out


def get_inputs():
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size, 1))
    attention_mask = (torch.arange(seq_len)[None, :] < lengths).long()
    return [torch.randn(batch_size, seq_len, hidden_size), attention_mask]


def get_init_inputs():
    return [hidden_size, num_heads, intermediate_size]


def _params():
    return 4 * hidden_size * hidden_size + 2 * hidden_size * intermediate_size + intermediate_size + 9 * hidden_size


def kbench_flops():
    tokens = batch_size * seq_len
    head_dim = hidden_size // num_heads
    pairs = batch_size * num_heads * seq_len * seq_len
    return 2 * tokens * (4 * hidden_size * hidden_size + 2 * hidden_size * intermediate_size) + 4 * pairs * head_dim


def kbench_bytes():
    return 4 * (_params() + 2 * batch_size * seq_len * hidden_size) + 8 * batch_size * seq_len
