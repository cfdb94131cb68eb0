"""Class-weighted negative log-likelihood per sample (reduction='none') of 8-class log-probabilities with int64 targets."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "NLL loss"
KBENCH_SMALL = {"batch_size": 4096}

batch_size = 134217728
num_classes = 8


class Model(nn.Module):
    def __init__(self, num_classes: int):
        super().__init__()
        self.register_buffer("class_weight", torch.rand(num_classes) + 0.5)

    def forward(self, log_probs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.nll_loss(log_probs, targets, weight=self.class_weight, reduction="none")


def get_inputs():
    log_probs = torch.log_softmax(torch.randn(batch_size, num_classes) * 2.0, dim=1)
    targets = torch.randint(0, num_classes, (batch_size,), dtype=torch.int64)
    return [log_probs, targets]


def get_init_inputs():
    return [num_classes]


def kbench_flops():
    return 2 * batch_size


def kbench_bytes():
    # A row of 8 fp32 is one 32-byte sector, so every row of log_probs is read
    # even though one element per row is used.
    return 4 * batch_size * num_classes + 8 * batch_size + 4 * batch_size + 4 * num_classes
