"""Mixtral-8x7B sparse mixture-of-experts block (transformers MixtralSparseMoeBlock): hidden 4096, 8 SwiGLU experts of 14336, top-2 routing with renormalised softmax weights."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 4
KBENCH_NAME = "Mixtral-8x7B sparse MoE block"
KBENCH_REQUIRES = ("transformers",)
# float32 only: in bfloat16 the router's top-2 choice flips on near-ties (about 0.2% of the
# tokens route differently from float64, one or two a call): those tokens' outputs change
# completely, so no tolerance tells a correct bfloat16 kernel from a wrong one.
KBENCH_DTYPES = ("float32",)
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "hidden_size": 64, "intermediate_size": 128}

batch_size = 1
seq_len = 512
hidden_size = 4096
intermediate_size = 14336
num_experts = 8
top_k = 2


def _init_weights(module):
    """Expert projections N(0, 1/fan_in), so each keeps the scale of its input; router
    logits of std about 1.5, so that the routing is neither uniform nor one-sided."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            gain = 1.5 if name == "gate.weight" else 1.0
            p.normal_(0.0, gain * p.shape[-1] ** -0.5)


class Model(nn.Module):
    def __init__(self, hidden_size, intermediate_size, num_experts, top_k):
        super().__init__()
        from transformers import MixtralConfig
        from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

        config = MixtralConfig(
            hidden_size=hidden_size,
            intermediate_size=intermediate_size,
            num_local_experts=num_experts,
            num_experts_per_tok=top_k,
            hidden_act="silu",
            router_jitter_noise=0.0,
            num_hidden_layers=1,
        )
        config._experts_implementation = "eager"  # the plain loop over experts (transformers 5.x)
        self.moe = MixtralSparseMoeBlock(config)
        _init_weights(self.moe)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        out = self.moe(hidden_states)
        return out[0] if isinstance(out, tuple) else out  # transformers 4.x also returns the router logits


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden_size)]


def get_init_inputs():
    return [hidden_size, intermediate_size, num_experts, top_k]


def kbench_flops():
    tokens = batch_size * seq_len
    return 2 * tokens * hidden_size * num_experts + top_k * tokens * (6 * hidden_size * intermediate_size + 5 * intermediate_size)


def kbench_bytes():
    # Every expert is used by some token at the default size, so all weights are read.
    return 4 * (num_experts * (3 * hidden_size * intermediate_size + hidden_size) + 2 * batch_size * seq_len * hidden_size)
