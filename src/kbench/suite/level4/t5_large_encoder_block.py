"""T5-v1.1-large (Flan-T5-large) first encoder block (transformers T5Block): d_model 1024, 16 heads of 64, relative position bias (32 buckets), RMS-style T5LayerNorm, gated-GELU MLP 2816, bidirectional."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "T5-v1.1-large encoder block"
KBENCH_REQUIRES = ("transformers",)
KBENCH_DTYPES = ("float32", "bfloat16")
# bfloat16: the reference's own error against float64 reaches about 0.033 x (1 + |output|); the tolerance
# leaves room for a correct kernel that rounds differently.
# bf16 on the H200 (audit 2026-11-30) the reference used 0.50 of atol 0.05, rtol 0.05
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.064, "rtol": 0.064}}
KBENCH_SMALL = {"batch_size": 2, "seq_len": 48, "d_model": 64, "num_heads": 4, "d_kv": 16, "d_ff": 160}

batch_size = 32
seq_len = 512
d_model = 1024
num_heads = 16
d_kv = 64
d_ff = 2816


def _init_weights(module, d_kv):
    """Projections N(0, 1/fan_in), so each keeps the scale of its input; T5 does not scale
    its attention scores, so queries and keys get std (2 / sqrt(d_kv))^(1/2) per element
    (scores of std about 2); relative position biases N(0, 1); T5LayerNorm scales N(1, 0.1^2)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("relative_attention_bias.weight"):
                p.normal_(0.0, 1.0)
            elif p.dim() == 2:
                gain = 2.0 / d_kv**0.5 if name.endswith(("SelfAttention.q.weight", "SelfAttention.k.weight")) else 1.0
                p.normal_(0.0, (gain / p.shape[1]) ** 0.5)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, d_model, num_heads, d_kv, d_ff):
        super().__init__()
        from transformers import T5Config
        from transformers.models.t5.modeling_t5 import T5Block

        config = T5Config(
            d_model=d_model,
            num_heads=num_heads,
            d_kv=d_kv,
            d_ff=d_ff,
            num_layers=1,
            feed_forward_proj="gated-gelu",
            relative_attention_num_buckets=32,
            relative_attention_max_distance=128,
            layer_norm_epsilon=1e-6,
            dropout_rate=0.0,
            is_decoder=False,
            use_cache=False,
        )
        config._attn_implementation = "sdpa"
        self.block = T5Block(config, has_relative_attention_bias=True)
        _init_weights(self.block, d_kv)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        # cache_position: transformers 4.x derives the query length from it.
        cache_position = torch.arange(hidden_states.shape[1], device=hidden_states.device)
        return self.block(hidden_states, cache_position=cache_position)[0]


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, d_kv, d_ff]


def _params():
    return 4 * d_model * num_heads * d_kv + 3 * d_model * d_ff + 2 * d_model + 32 * num_heads


def kbench_flops():
    tokens = batch_size * seq_len
    pairs = batch_size * num_heads * seq_len * seq_len
    return 2 * tokens * (4 * d_model * num_heads * d_kv + 3 * d_model * d_ff) + 4 * pairs * d_kv + pairs


def kbench_bytes():
    return 4 * (_params() + 2 * batch_size * seq_len * d_model)
