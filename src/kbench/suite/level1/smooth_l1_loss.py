"""Smooth L1 (Huber-style, beta = 1) loss, mean over all elements; differences span both branches and target rows have log-normal scales."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Smooth L1 loss"
KBENCH_SMALL = {"batch_size": 64, "dim": 1024}

batch_size = 4096
dim = 131072
beta = 1.0


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=self.beta)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    predictions.mul_(torch.exp(torch.randn(batch_size, 1) * 0.75))
    targets = torch.randn(batch_size, dim)
    targets.mul_(torch.exp(torch.randn(batch_size, 1) * 0.75))
    return [predictions, targets]


def get_init_inputs():
    return [beta]


def kbench_flops():
    return 4 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim + 4
