"""BERT-base (uncased) whole encoder (transformers BertModel, no pooler): vocabulary 30522, 12 layers, hidden 768, 12 heads, MLP 3072; token ids, padding mask and segment ids in, last hidden states out."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "BERT-base encoder (whole model)"
KBENCH_REQUIRES = ("transformers",)
KBENCH_DTYPES = ("float32", "bfloat16")
# bfloat16: the reference's own error against float64 reaches about 0.045 x (1 + |output|); the tolerance
# leaves room for a correct kernel that rounds differently.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.08, "rtol": 0.08}}
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 256, "hidden_size": 64, "num_heads": 4, "intermediate_size": 256, "num_layers": 2}

batch_size = 4
seq_len = 512
vocab_size = 30522
hidden_size = 768
num_heads = 12
intermediate_size = 3072
num_layers = 12


def _init_weights(module):
    """Embeddings N(0, 1); projections N(0, 1/fan_in), so each keeps the scale of its input
    (queries and keys sqrt(2) larger: attention scores of std about 2); biases N(0, 0.1^2);
    LayerNorm scales N(1, 0.1^2)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "embeddings" in name and p.dim() == 2:
                p.normal_(0.0, 1.0)
            elif p.dim() == 2:
                gain = 2.0 if name.endswith(("query.weight", "key.weight")) else 1.0
                p.normal_(0.0, (gain / p.shape[1]) ** 0.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size, num_heads, intermediate_size, num_layers):
        super().__init__()
        from transformers import BertConfig, BertModel

        config = BertConfig(
            vocab_size=vocab_size,
            hidden_size=hidden_size,
            num_attention_heads=num_heads,
            intermediate_size=intermediate_size,
            num_hidden_layers=num_layers,
            max_position_embeddings=512,
            type_vocab_size=2,
            hidden_act="gelu",
            layer_norm_eps=1e-12,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
        config._attn_implementation = "sdpa"
        self.bert = BertModel(config, add_pooling_layer=False)
        _init_weights(self.bert)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return out.last_hidden_state


def get_inputs():
    input_ids = torch.randint(0, vocab_size, (batch_size, seq_len))
    positions = torch.arange(seq_len)[None, :]
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size, 1))
    attention_mask = (positions < lengths).long()
    # Two segments per sequence (sentence A, then sentence B from a random split point).
    splits = (lengths * (0.25 + 0.5 * torch.rand(batch_size, 1))).long()
    token_type_ids = ((positions >= splits) & (positions < lengths)).long()
    return [input_ids, attention_mask, token_type_ids]


def get_init_inputs():
    return [vocab_size, hidden_size, num_heads, intermediate_size, num_layers]


def _layer_params():
    return 4 * hidden_size * hidden_size + 2 * hidden_size * intermediate_size + intermediate_size + 9 * hidden_size


def kbench_flops():
    tokens = batch_size * seq_len
    head_dim = hidden_size // num_heads
    pairs = batch_size * num_heads * seq_len * seq_len
    per_layer = 2 * tokens * (4 * hidden_size * hidden_size + 2 * hidden_size * intermediate_size) + 4 * pairs * head_dim
    return num_layers * per_layer


def kbench_bytes():
    rows = batch_size * seq_len * hidden_size
    weights = num_layers * _layer_params() + (seq_len + 2 + 2) * hidden_size
    return 4 * (weights + 2 * rows) + 3 * 8 * batch_size * seq_len
