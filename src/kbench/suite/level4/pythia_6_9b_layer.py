"""Pythia-6.9B layer (transformers GPTNeoXLayer): hidden 4096, 32 heads, rotary on a quarter of each head, parallel attention and MLP residuals, LayerNorms, GELU MLP 16384, causal."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "Pythia-6.9B (GPT-NeoX) layer"
KBENCH_REQUIRES = ("transformers",)
KBENCH_DTYPES = ("float32", "bfloat16")
# bfloat16: the reference's own error against float64 reaches about 0.027 x (1 + |output|); the tolerance
# leaves room for a correct kernel that rounds differently.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "hidden_size": 64, "num_heads": 4, "intermediate_size": 256}

batch_size = 1
seq_len = 1024
hidden_size = 4096
num_heads = 32
intermediate_size = 16384


def _init_weights(module, num_heads):
    """Projections N(0, 1/fan_in), so each keeps the scale of its input (queries and keys
    sqrt(2) larger: attention scores of std about 2); biases N(0, 0.1^2); LayerNorm scales N(1, 0.1^2).
    GPT-NeoX interleaves its fused projection per head: [q | k | v] for head 0, then head 1..."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, p.shape[1] ** -0.5)
                if name.endswith("query_key_value.weight"):
                    rows = p.view(num_heads, 3, -1, p.shape[1])
                    rows[:, :2].mul_(2.0**0.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__()
        from transformers import GPTNeoXConfig
        from transformers.models.gpt_neox.modeling_gpt_neox import (
            GPTNeoXLayer,
            GPTNeoXRotaryEmbedding,
        )

        config = GPTNeoXConfig(
            hidden_size=hidden_size,
            num_attention_heads=num_heads,
            intermediate_size=intermediate_size,
            num_hidden_layers=1,
            hidden_act="gelu",
            rotary_pct=0.25,
            rotary_emb_base=10000,
            max_position_embeddings=2048,
            layer_norm_eps=1e-5,
            use_parallel_residual=True,
            attention_dropout=0.0,
            hidden_dropout=0.0,
        )
        config._attn_implementation = "sdpa"
        self.layer = GPTNeoXLayer(config, layer_idx=0)
        _init_weights(self.layer, num_heads)
        # Outside the module tree, so that casting the model to bfloat16 leaves the
        # rotary frequencies in float32, as transformers keeps them.
        self._rotary = (GPTNeoXRotaryEmbedding(config=config),)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        rotary = self._rotary[0]
        if rotary.inv_freq.device != hidden_states.device:
            rotary.to(hidden_states.device)
        position_ids = torch.arange(hidden_states.shape[1], device=hidden_states.device).unsqueeze(0)
        cos, sin = rotary(hidden_states, position_ids)
        out = self.layer(hidden_states, position_ids=position_ids, position_embeddings=(cos, sin))
        return out[0] if isinstance(out, tuple) else out


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size, num_heads, intermediate_size]


def _params():
    attention = 4 * hidden_size * hidden_size + 4 * hidden_size
    return attention + 2 * hidden_size * intermediate_size + intermediate_size + 5 * hidden_size


def kbench_flops():
    tokens = batch_size * seq_len
    head_dim = hidden_size // num_heads
    pairs = batch_size * num_heads * seq_len * (seq_len + 1) // 2  # causal: the lower triangle
    matmuls = 4 * hidden_size * hidden_size + 2 * hidden_size * intermediate_size
    return 2 * tokens * matmuls + 4 * pairs * head_dim


def kbench_bytes():
    return 4 * (_params() + 2 * batch_size * seq_len * hidden_size)
