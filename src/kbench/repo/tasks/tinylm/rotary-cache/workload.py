"""tinylm/rotary-cache: rotary embeddings of a prefill chunk in each layer of a long-context model.

A 4-layer model with max_seq_len 1048576 (a million-token context) turns the queries and keys
of an 8192-token chunk for 8 sequences in each layer, at random positions of the context.

The sizes keep both the base and a patch's time on the GPU, not the host: on the H200's host,
Python's time per operation moved by 20-40% from one second to the next (2026-12-02,
docs/measurements/2026-12-02-h200-host-bound-workloads.log), and a decode step of one token,
this task's first workload, was host-bound (3-5 ms for the expert, moving by half from round
to round). Here each layer's rotation reads and writes about 2.7 GB (queries and keys, float32),
against the few launches whose host time was 0.1-0.16 ms a layer in that decode step, and the
base's float64 tables of a million positions move about 4.3 GB more; the times these sizes give
on the H200 are not measured yet (docs/tasks-suite.md).
"""

import torch

from tinylm.rotary import RotaryEmbedding

LAYERS = 4
BATCH = 8
SEQ = 8192
HEADS = 32
KV_HEADS = 8
HEAD_DIM = 128
MAX_SEQ_LEN = 1048576
KBENCH_SMALL = {"LAYERS": 2, "BATCH": 2, "SEQ": 3, "HEADS": 4, "KV_HEADS": 2, "HEAD_DIM": 16, "MAX_SEQ_LEN": 4096}


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary = RotaryEmbedding(HEAD_DIM, MAX_SEQ_LEN, theta=500000.0)

    def forward(self, q, k, positions):
        turned = [self.rotary(q[layer], k[layer], positions) for layer in range(LAYERS)]
        # Each layer's pair as it comes: stacking them would copy 10 GB a call, for both sides alike.
        return tuple(t for pair in turned for t in pair)


def get_inputs():
    return [torch.randn(LAYERS, BATCH, SEQ, HEADS, HEAD_DIM),
            torch.randn(LAYERS, BATCH, SEQ, KV_HEADS, HEAD_DIM),
            torch.randint(0, MAX_SEQ_LEN, (BATCH, SEQ))]


def get_init_inputs():
    return []
