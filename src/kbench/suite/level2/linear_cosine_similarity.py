"""CLIP-style pair scores: two Linear projections into a 512-d joint space, cosine similarity of each pair, times a learned logit scale."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 2
KBENCH_NAME = "Two Linears + cosine similarity + scale"
KBENCH_SMALL = {"pairs": 32, "image_features": 64, "text_features": 48, "embed_dim": 32}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.21 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"pairs": 98304}}
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.06, "rtol": 0.02}}

pairs = 8192
image_features = 4096
text_features = 4096
embed_dim = 512


class Model(nn.Module):
    def __init__(self, image_features: int, text_features: int, embed_dim: int):
        super().__init__()
        self.image_proj = nn.Linear(image_features, embed_dim, bias=False)
        self.text_proj = nn.Linear(text_features, embed_dim, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(14.0))

    def forward(self, image: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        similarity = F.cosine_similarity(self.image_proj(image), self.text_proj(text), dim=-1)
        return self.logit_scale * similarity


def get_inputs():
    # Matching pairs share a component, so the similarities are not all near zero.
    shared = torch.randn(pairs, 1) * torch.randn(pairs, 1).sign()
    image = torch.randn(pairs, image_features)
    text = torch.randn(pairs, text_features)
    text[:, : min(image_features, text_features)] += (
        shared * image[:, : min(image_features, text_features)]
    )
    return [image, text]


def get_init_inputs():
    return [image_features, text_features, embed_dim]


def kbench_flops():
    return 2 * pairs * embed_dim * (image_features + text_features) + 8 * pairs * embed_dim


def kbench_bytes():
    return 4 * (
        pairs * (image_features + text_features)
        + embed_dim * (image_features + text_features)
        + 1
        + pairs
    )
