"""GPT-2 (124M) whole language model (transformers GPT2LMHeadModel): vocabulary 50257, 12 layers, hidden 768, 12 heads, context 1024, LM head tied to the token embeddings; token ids in, logits out."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "GPT-2 (124M) language model (whole model)"
KBENCH_REQUIRES = ("transformers",)
# float32 only: over 12 layers and the tied LM head the bfloat16 reference drifts by up to
# ~0.2 in logits of std 2.8: a tolerance that wide would not tell a right kernel from a wrong one.
KBENCH_DTYPES = ("float32",)
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "vocab_size": 256, "hidden_size": 64, "num_heads": 4, "num_layers": 2}

batch_size = 2
seq_len = 1024
vocab_size = 50257
hidden_size = 768
num_heads = 12
num_layers = 12


def _init_weights(module, hidden_size):
    """Token and position embeddings N(0, 0.1^2) (the token embeddings are also the LM head:
    logits of std about 3); projections N(0, 1/fan_in), so each keeps the scale of its input
    (queries and keys sqrt(2) larger: attention scores of std about 2); biases N(0, 0.1^2);
    LayerNorm scales N(1, 0.1^2). GPT-2's Conv1D stores its weight as (in, out)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith(("wte.weight", "wpe.weight")):
                p.normal_(0.0, 0.1)
            elif p.dim() == 2:
                p.normal_(0.0, p.shape[0] ** -0.5)
                if name.endswith("attn.c_attn.weight"):
                    p[:, : 2 * hidden_size].mul_(2.0**0.5)  # the query and key columns
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:
                p.normal_(1.0, 0.1)


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size, num_heads, num_layers):
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(
            vocab_size=vocab_size,
            n_embd=hidden_size,
            n_head=num_heads,
            n_layer=num_layers,
            n_positions=1024,
            activation_function="gelu_new",
            layer_norm_epsilon=1e-5,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            tie_word_embeddings=True,
            bos_token_id=vocab_size - 1,
            eos_token_id=vocab_size - 1,
            use_cache=False,
        )
        config._attn_implementation = "sdpa"
        self.lm = GPT2LMHeadModel(config)
        _init_weights(self.lm, hidden_size)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=input_ids, use_cache=False).logits


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden_size, num_heads, num_layers]


def _layer_params():
    return 12 * hidden_size * hidden_size + 13 * hidden_size


def kbench_flops():
    tokens = batch_size * seq_len
    head_dim = hidden_size // num_heads
    pairs = batch_size * num_heads * seq_len * (seq_len + 1) // 2  # causal: the lower triangle
    per_layer = 24 * tokens * hidden_size * hidden_size + 4 * pairs * head_dim
    return num_layers * per_layer + 2 * tokens * hidden_size * vocab_size


def kbench_bytes():
    weights = num_layers * _layer_params() + (vocab_size + seq_len + 2) * hidden_size
    return 4 * (weights + batch_size * seq_len * vocab_size) + 8 * batch_size * seq_len
