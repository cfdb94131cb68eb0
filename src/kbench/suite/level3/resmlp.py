"""Residual MLP tower: pre-norm blocks (LayerNorm, Linear to 4x, GELU, Linear back) added to the stream."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Residual MLP tower (pre-norm, GELU)"
KBENCH_SMALL = {"batch_size": 2, "tokens": 8, "dim": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.63 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 32}}
# In bfloat16 the reference itself is off from float64 by up to 0.014 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 8
tokens = 512
dim = 1024
num_blocks = 4
expansion = 4


class Block(nn.Module):
    def __init__(self, dim: int, expansion: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, expansion * dim)
        self.fc2 = nn.Linear(expansion * dim, dim)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.2)
            self.norm.bias.normal_(0.0, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


class Model(nn.Module):
    def __init__(self, dim: int, num_blocks: int, expansion: int):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim, expansion) for _ in range(num_blocks)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.blocks(x))


def get_inputs():
    return [torch.randn(batch_size, tokens, dim)]


def get_init_inputs():
    return [dim, num_blocks, expansion]


def kbench_flops():
    n = batch_size * tokens
    per_block = 2 * 2 * n * dim * expansion * dim + 8 * n * expansion * dim + 10 * n * dim
    return num_blocks * per_block + 8 * n * dim


def kbench_bytes():
    weights = num_blocks * (2 * dim * expansion * dim + expansion * dim + 3 * dim) + 2 * dim
    return 4 * (2 * batch_size * tokens * dim + weights)
