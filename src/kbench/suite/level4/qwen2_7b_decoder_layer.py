"""Qwen2-7B decoder layer (transformers Qwen2DecoderLayer): hidden 3584, 28 heads, 4 KV heads, biased Q/K/V projections, MLP 18944, RoPE theta 1e6, causal."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "Qwen2-7B decoder layer"
KBENCH_REQUIRES = ("transformers",)
KBENCH_DTYPES = ("float32", "bfloat16")
# bfloat16: the reference's own error against float64 reaches about 0.035 x (1 + |output|); the tolerance
# leaves room for a correct kernel that rounds differently.
# bf16 on the H200 (audit 2026-11-30) the reference used 0.59 of atol 0.05, rtol 0.05
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.074, "rtol": 0.074}}
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 1, "intermediate_size": 160}

batch_size = 1
seq_len = 1024
hidden_size = 3584
num_heads = 28
num_kv_heads = 4
intermediate_size = 18944


def _init_weights(module):
    """Projections N(0, 1/fan_in), so each keeps the scale of its input (queries and keys
    sqrt(2) larger: attention scores of std about 2); biases N(0, 0.1^2); RMSNorm scales N(1, 0.1^2)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.dim() == 2:
                gain = 2.0 if name.endswith(("q_proj.weight", "k_proj.weight")) else 1.0
                p.normal_(0.0, (gain / p.shape[1]) ** 0.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, hidden_size, num_heads, num_kv_heads, intermediate_size):
        super().__init__()
        from transformers import Qwen2Config
        from transformers.models.qwen2.modeling_qwen2 import (
            Qwen2DecoderLayer,
            Qwen2RotaryEmbedding,
        )

        config = Qwen2Config(
            hidden_size=hidden_size,
            num_attention_heads=num_heads,
            num_key_value_heads=num_kv_heads,
            intermediate_size=intermediate_size,
            num_hidden_layers=1,
            max_position_embeddings=32768,
            rope_theta=1000000.0,
            rms_norm_eps=1e-6,
            use_sliding_window=False,
            attention_dropout=0.0,
        )
        config._attn_implementation = "sdpa"
        self.layer = Qwen2DecoderLayer(config, layer_idx=0)
        _init_weights(self.layer)
        # Outside the module tree, so that casting the model to bfloat16 leaves the
        # rotary frequencies in float32, as transformers keeps them.
        self._rotary = (Qwen2RotaryEmbedding(config=config),)

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
    return [hidden_size, num_heads, num_kv_heads, intermediate_size]


def _params():
    head_dim = hidden_size // num_heads
    attention = 2 * hidden_size * (num_heads + num_kv_heads) * head_dim + (num_heads + 2 * num_kv_heads) * head_dim
    return attention + 3 * hidden_size * intermediate_size + 2 * hidden_size


def kbench_flops():
    tokens = batch_size * seq_len
    head_dim = hidden_size // num_heads
    pairs = batch_size * num_heads * seq_len * (seq_len + 1) // 2  # causal: the lower triangle
    return 2 * tokens * (_params() - 2 * hidden_size) + 4 * pairs * head_dim


def kbench_bytes():
    return 4 * (_params() + 2 * batch_size * seq_len * hidden_size)
