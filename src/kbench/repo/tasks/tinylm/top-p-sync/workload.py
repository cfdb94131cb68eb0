"""tinylm/top-p-sync: one nucleus-sampling step for a batch of sequences (temperature 0.8, top_p 0.9).

The exponential noise of the race is an input, so every implementation draws the same tokens.
"""

import torch

from tinylm.sampling import sample

BATCH = 64
VOCAB = 128256  # Llama 3's vocabulary: the batched expert's time is the GPU's (docs/tasks-suite.md)
KBENCH_SMALL = {"BATCH": 4, "VOCAB": 50}


class Model(torch.nn.Module):
    def __init__(self, temperature, top_p):
        super().__init__()
        self.temperature = temperature
        self.top_p = top_p

    def forward(self, logits, noise):
        return sample(logits, self.temperature, top_p=self.top_p, noise=noise)


def get_inputs():
    return [torch.randn(BATCH, VOCAB) * 3.0, torch.empty(BATCH, VOCAB).exponential_()]


def get_init_inputs():
    return [0.8, 0.9]
