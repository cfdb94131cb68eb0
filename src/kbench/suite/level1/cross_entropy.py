"""Cross-entropy (mean over the batch) of logits against int64 class targets; rows have their own temperature and target-logit boost, so per-row losses span roughly 0 to 18."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Cross-entropy loss"
KBENCH_SMALL = {"batch_size": 64, "num_classes": 1000}

batch_size = 4096
num_classes = 131072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    logits = torch.randn(batch_size, num_classes)
    logits.mul_(torch.rand(batch_size, 1) * 3.0 + 0.5)
    targets = torch.randint(0, num_classes, (batch_size,), dtype=torch.int64)
    # Raise the target logit by a per-row amount, from no help to a confident
    # correct prediction, so the batch mean varies clearly from seed to seed.
    logits[torch.arange(batch_size), targets] += torch.rand(batch_size) * 16.0
    return [logits, targets]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * num_classes


def kbench_bytes():
    return 4 * batch_size * num_classes + 8 * batch_size + 4
