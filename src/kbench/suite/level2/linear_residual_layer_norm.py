"""Post-LN transformer sublayer output: Linear projection of the sublayer's activations, plus the residual stream, then LayerNorm (random affine)."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Linear + residual add + LayerNorm"
KBENCH_SMALL = {"tokens": 32, "inner": 128, "hidden": 64}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.17 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"tokens": 118784}}
# bf16 on the H200 (audit 2026-11-30) the reference used 0.75 of atol 0.02, rtol 0.02
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.038, "rtol": 0.038}}

tokens = 8192
inner = 4096
hidden = 1024


class Model(nn.Module):
    def __init__(self, inner: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(inner, hidden)
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(residual + self.proj(h))


def get_inputs():
    return [torch.randn(tokens, inner), torch.randn(tokens, hidden)]


def get_init_inputs():
    return [inner, hidden]


def kbench_flops():
    return 2 * tokens * hidden * inner + 10 * tokens * hidden


def kbench_bytes():
    return 4 * (tokens * inner + hidden * (inner + 3) + 2 * tokens * hidden)
