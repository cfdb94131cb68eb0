"""Cosine-similarity loss mean(1 - cos(prediction, target)) over long rows; each target row has its own random correlation with its prediction."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 1
KBENCH_NAME = "Cosine similarity loss"
KBENCH_SMALL = {"batch_size": 64, "dim": 1024}

batch_size = 2048
dim = 262144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cosine = F.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1.0 - cosine)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    rho = torch.rand(batch_size, 1) * 2.0 - 1.0
    targets = torch.randn(batch_size, dim)
    targets.mul_(torch.sqrt(1.0 - rho * rho)).addcmul_(predictions, rho)
    return [predictions, targets]


def get_init_inputs():
    return []


def kbench_flops():
    return 6 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim + 4
