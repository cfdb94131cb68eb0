"""Binary hinge loss mean(clamp(1 - prediction * target, min=0)) with +-1 float targets; each row of predictions has its own accuracy and spread."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Hinge loss"
KBENCH_SMALL = {"batch_size": 64, "dim": 1024}

batch_size = 4096
dim = 131072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1.0 - predictions * targets, min=0.0))


def get_inputs():
    targets = torch.randint(0, 2, (batch_size, dim)).float().mul_(2.0).sub_(1.0)
    # prediction = margin_row * target + spread_row * noise: rows range from
    # mostly wrong to mostly beyond the margin, so the hinge is active for a
    # row-dependent share of elements and the mean varies from seed to seed.
    margin = torch.rand(batch_size, 1) * 4.0 - 1.0
    predictions = torch.randn(batch_size, dim)
    predictions.mul_(torch.rand(batch_size, 1) * 2.0 + 0.1).addcmul_(targets, margin)
    return [predictions, targets]


def get_init_inputs():
    return []


def kbench_flops():
    return 4 * batch_size * dim


def kbench_bytes():
    return 2 * 4 * batch_size * dim + 4
