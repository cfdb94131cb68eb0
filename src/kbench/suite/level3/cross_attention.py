"""Cross-attention of image tokens to text-encoder tokens (as in latent diffusion): queries from the image, keys and values from a context of another width."""

import math

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Cross-attention (image tokens to text context)"
KBENCH_SMALL = {"batch_size": 2, "num_tokens": 64, "context_len": 7, "d_model": 32, "d_context": 24, "num_heads": 4}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.71 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 112}}
# In bfloat16 the reference itself is off from float64 by up to 0.0078 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

batch_size = 32
num_tokens = 1024
context_len = 77
d_model = 640
d_context = 768
num_heads = 10


class Model(nn.Module):
    def __init__(self, d_model: int, d_context: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.norm = nn.LayerNorm(d_model)
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_context, d_model, bias=False)
        self.v = nn.Linear(d_context, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model)
        with torch.no_grad():
            # query/key entries of std 1.5: scores of std about 2, so attention is peaked, not uniform
            nn.init.normal_(self.q.weight, std=1.5 * d_model ** -0.5)
            nn.init.normal_(self.k.weight, std=1.5 * d_context ** -0.5)
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        s, h = context.shape[1], self.num_heads
        q = self.q(self.norm(x)).view(b, n, h, d // h).transpose(1, 2)
        k = self.k(context).view(b, s, h, d // h).transpose(1, 2)
        v = self.v(context).view(b, s, h, d // h).transpose(1, 2)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // h), dim=-1)
        return x + self.o((weights @ v).transpose(1, 2).reshape(b, n, d))


def get_inputs():
    return [torch.randn(batch_size, num_tokens, d_model), torch.randn(batch_size, context_len, d_context)]


def get_init_inputs():
    return [d_model, d_context, num_heads]


def kbench_flops():
    n, s = batch_size * num_tokens, batch_size * context_len
    proj = 2 * n * 2 * d_model * d_model + 2 * s * 2 * d_context * d_model
    attn = 4 * batch_size * num_tokens * context_len * d_model + 5 * batch_size * num_heads * num_tokens * context_len
    return proj + attn + 10 * n * d_model


def kbench_bytes():
    params = 2 * d_model * d_model + 2 * d_context * d_model + 3 * d_model
    return 4 * (batch_size * (2 * num_tokens * d_model + context_len * d_context) + params)
