"""Text CNN feature: 1-D convolution (width 5) over word embeddings, ReLU, max over time."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 2
KBENCH_NAME = "Conv1d + ReLU + max over time"
KBENCH_SMALL = {"batch_size": 4, "embed_dim": 32, "filters": 32, "seq_len": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 on the H200 (audit 2026-11-30) the reference used 0.51 of atol 0.01, rtol 0.01
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.013, "rtol": 0.013}}
# bf16 at the fp32 size ran 0.38 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 832}}

batch_size = 128
embed_dim = 512
filters = 512
seq_len = 256
kernel_size = 5


class Model(nn.Module):
    def __init__(self, embed_dim: int, filters: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(embed_dim, filters, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, embed_dim, seq_len) -> (batch, filters)
        return torch.relu(self.conv(x)).amax(dim=-1)


def get_inputs():
    return [torch.randn(batch_size, embed_dim, seq_len)]


def get_init_inputs():
    return [embed_dim, filters, kernel_size]


def kbench_flops():
    outputs = batch_size * filters * (seq_len - kernel_size + 1)
    return outputs * (2 * embed_dim * kernel_size + 3)


def kbench_bytes():
    x = batch_size * embed_dim * seq_len
    w = filters * (embed_dim * kernel_size + 1)
    return 4 * (x + w + batch_size * filters)
