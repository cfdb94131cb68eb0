"""KL divergence (reduction='batchmean') of predicted log-probabilities against target probabilities; rows have their own temperatures."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "KL divergence loss"
KBENCH_SMALL = {"batch_size": 64, "num_classes": 1000}

batch_size = 8192
num_classes = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(log_predictions, targets, reduction="batchmean")


def get_inputs():
    logits = torch.randn(batch_size, num_classes)
    logits.mul_(torch.rand(batch_size, 1) * 2.75 + 0.25)
    log_predictions = torch.log_softmax(logits, dim=1)
    del logits
    target_logits = torch.randn(batch_size, num_classes)
    target_logits.mul_(torch.rand(batch_size, 1) * 2.75 + 0.25)
    targets = torch.softmax(target_logits, dim=1)
    return [log_predictions, targets]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * num_classes


def kbench_bytes():
    return 2 * 4 * batch_size * num_classes + 4
