"""Triplet margin loss (margin 1, L2 distance) per triplet (reduction='none'); the hinge is active for most but not all triplets."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 1
KBENCH_NAME = "Triplet margin loss"
KBENCH_SMALL = {"batch_size": 256, "dim": 256}

batch_size = 1048576
dim = 512
margin = 1.0


class Model(nn.Module):
    def __init__(self, margin: float):
        super().__init__()
        self.loss = nn.TripletMarginLoss(margin=margin, p=2.0, reduction="none")

    def forward(self, anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
        return self.loss(anchor, positive, negative)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [margin]


def kbench_flops():
    return 6 * batch_size * dim


def kbench_bytes():
    return 3 * 4 * batch_size * dim + 4 * batch_size
