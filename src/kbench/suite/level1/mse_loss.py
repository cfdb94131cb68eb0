"""Mean squared error (mean over all elements); target rows have log-normal scales so the loss varies by seed."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "MSE loss"
KBENCH_SMALL = {"batch_size": 64, "dim": 1024}

batch_size = 4096
dim = 131072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(predictions, targets)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    predictions.mul_(torch.exp(torch.randn(batch_size, 1) * 0.75))
    targets = torch.randn(batch_size, dim)
    targets.mul_(torch.exp(torch.randn(batch_size, 1) * 0.75))
    return [predictions, targets]


def get_init_inputs():
    return []


def kbench_flops():
    return 3 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim + 4
