"""tinylm/top-k-select: top-k filtering of a batch of logits over Llama 3's vocabulary (k = 50)."""

import torch

from tinylm.sampling import top_k_filter

BATCH = 256
VOCAB = 128256
TOP_K = 50
KBENCH_SMALL = {"BATCH": 4, "VOCAB": 100, "TOP_K": 5}


class Model(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        return top_k_filter(logits, self.k)


def get_inputs():
    return [torch.randn(BATCH, VOCAB) * 2.0]


def get_init_inputs():
    return [TOP_K]
