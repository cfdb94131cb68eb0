"""A two-layer TinyLlama-1.1B (transformers LlamaForCausalLM, the checkpoint's shapes with 2 of its 22 layers): vocabulary 32000, hidden 2048, 32 heads, 4 KV heads, MLP 5632; token ids in, next-token logits out."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "TinyLlama-1.1B, 2 layers, with embeddings and LM head"
KBENCH_REQUIRES = ("transformers",)
KBENCH_DTYPES = ("float32", "bfloat16")
# bfloat16: the reference's own error against float64 reaches about 0.048 x (1 + |output|); the tolerance
# leaves room for a correct kernel that rounds differently.
# bf16 on the H200 (audit 2026-11-30) the reference used 0.51 of atol 0.08, rtol 0.08
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.11, "rtol": 0.11}}
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 256, "hidden_size": 64, "num_heads": 4, "num_kv_heads": 2, "intermediate_size": 128}

batch_size = 1
seq_len = 1024
vocab_size = 32000
hidden_size = 2048
num_heads = 32
num_kv_heads = 4
intermediate_size = 5632
num_layers = 2


def _init_weights(module):
    """Token embeddings N(0, 1); projections and the LM head N(0, 1/fan_in), so each keeps the
    scale of its input (queries and keys sqrt(2) larger: attention scores of std about 2);
    RMSNorm scales N(1, 0.1^2)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("embed_tokens.weight"):
                p.normal_(0.0, 1.0)
            elif p.dim() == 2:
                gain = 2.0 if name.endswith(("q_proj.weight", "k_proj.weight")) else 1.0
                p.normal_(0.0, (gain / p.shape[1]) ** 0.5)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size, num_heads, num_kv_heads, intermediate_size, num_layers):
        super().__init__()
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(
            vocab_size=vocab_size,
            hidden_size=hidden_size,
            num_attention_heads=num_heads,
            num_key_value_heads=num_kv_heads,
            intermediate_size=intermediate_size,
            num_hidden_layers=num_layers,
            max_position_embeddings=2048,
            rope_theta=10000.0,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            attention_dropout=0.0,
            use_cache=False,
        )
        config._attn_implementation = "sdpa"
        self.lm = LlamaForCausalLM(config)
        _init_weights(self.lm)
        # Taken out of the module tree, so that casting the model to bfloat16 leaves the
        # rotary frequencies in float32, as transformers keeps them when it loads a model in bfloat16.
        rotary = self.lm.model.rotary_emb
        del self.lm.model.rotary_emb
        object.__setattr__(self.lm.model, "rotary_emb", rotary)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        rotary = self.lm.model.rotary_emb
        if rotary.inv_freq.device != input_ids.device:
            rotary.to(input_ids.device)
        return self.lm(input_ids=input_ids, use_cache=False).logits


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden_size, num_heads, num_kv_heads, intermediate_size, num_layers]


def _layer_params():
    head_dim = hidden_size // num_heads
    return 2 * hidden_size * (num_heads + num_kv_heads) * head_dim + 3 * hidden_size * intermediate_size


def kbench_flops():
    tokens = batch_size * seq_len
    head_dim = hidden_size // num_heads
    pairs = batch_size * num_heads * seq_len * (seq_len + 1) // 2  # causal: the lower triangle
    return num_layers * (2 * tokens * _layer_params() + 4 * pairs * head_dim) + 2 * tokens * hidden_size * vocab_size


def kbench_bytes():
    weights = num_layers * (_layer_params() + 2 * hidden_size) + hidden_size + hidden_size * vocab_size
    rows = batch_size * seq_len * hidden_size  # the embedding rows actually read
    return 4 * (weights + rows + batch_size * seq_len * vocab_size) + 8 * batch_size * seq_len
