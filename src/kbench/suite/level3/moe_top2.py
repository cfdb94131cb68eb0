"""Mixture-of-experts feed-forward layer: a softmax router picks the top 2 of 8 SwiGLU experts per token; each token is sent only to its experts."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Mixture of experts (top-2 of 8)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 32, "d_model": 32, "d_ff": 48}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.013 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 4
seq_len = 2048
d_model = 1024
d_ff = 2816
num_experts = 8
top_k = 2

# Routing weights: expert i among the top k gets p_i - p_(k+1), its router
# probability minus the best unselected one's. A weight goes to zero as an
# expert drops out of the top k, so the output is continuous in the router
# logits: a near-tie that two implementations (or dtypes, or devices) break
# differently changes the output by about the size of the tie, not by a whole
# expert's output.


class Expert(nn.Module):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.gate = nn.Linear(d_model, d_ff, bias=False)
        self.up = nn.Linear(d_model, d_ff, bias=False)
        self.down = nn.Linear(d_ff, d_model, bias=False)
        nn.init.normal_(self.gate.weight, std=d_model ** -0.5)
        nn.init.normal_(self.up.weight, std=d_model ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Model(nn.Module):
    def __init__(self, d_model: int, d_ff: int, num_experts: int, top_k: int):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(d_model, num_experts, bias=False)
        nn.init.normal_(self.router.weight, std=2.0 * d_model ** -0.5)  # logits of std about 2
        self.experts = nn.ModuleList(Expert(d_model, d_ff) for _ in range(num_experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        probs = torch.softmax(self.router(flat), dim=-1)
        top = probs.topk(self.top_k + 1, dim=-1)
        weights = top.values[:, : self.top_k] - top.values[:, self.top_k :]
        chosen = top.indices[:, : self.top_k]
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token, slot = (chosen == e).nonzero(as_tuple=True)
            if token.numel():
                # each token appears at most once per expert: the add is deterministic
                out.index_add_(0, token, expert(flat[token]) * weights[token, slot, None])
        return out.view_as(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_ff, num_experts, top_k]


def kbench_flops():
    n = batch_size * seq_len
    return n * (2 * d_model * num_experts + 5 * num_experts + top_k * (3 * 2 * d_model * d_ff + 5 * d_ff + 3 * d_model))


def kbench_bytes():
    params = num_experts * (3 * d_model * d_ff + d_model)
    return 4 * (2 * batch_size * seq_len * d_model + params)
