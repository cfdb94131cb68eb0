"""tinylm/rotary-cache: rotary embeddings of one decode step in each layer of a long-context model.

A 32-layer model with max_seq_len 131072 (Llama 3.1's) turns one query and key per
sequence per layer; the sequences are at random positions of the context.
"""

import torch

from tinylm.rotary import RotaryEmbedding

LAYERS = 32
BATCH = 32
HEADS = 32
KV_HEADS = 8
HEAD_DIM = 128
MAX_SEQ_LEN = 131072
KBENCH_SMALL = {"LAYERS": 2, "BATCH": 2, "HEADS": 4, "KV_HEADS": 2, "HEAD_DIM": 16, "MAX_SEQ_LEN": 4096}


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary = RotaryEmbedding(HEAD_DIM, MAX_SEQ_LEN, theta=500000.0)

    def forward(self, q, k, positions):
        turned = [self.rotary(q[layer], k[layer], positions) for layer in range(LAYERS)]
        return torch.stack([tq for tq, _ in turned]), torch.stack([tk for _, tk in turned])


def get_inputs():
    return [torch.randn(LAYERS, BATCH, 1, HEADS, HEAD_DIM),
            torch.randn(LAYERS, BATCH, 1, KV_HEADS, HEAD_DIM),
            torch.randint(0, MAX_SEQ_LEN, (BATCH, 1))]


def get_init_inputs():
    return []
