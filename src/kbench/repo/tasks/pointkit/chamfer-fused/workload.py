"""pointkit/chamfer-fused: the Chamfer distance between two batches of clouds (a reconstruction loss)."""

import torch

from pointkit import chamfer_distance

BATCH = 4
POINTS_A = 8192
POINTS_B = 8192
KBENCH_SMALL = {"BATCH": 2, "POINTS_A": 40, "POINTS_B": 70}


class Model(torch.nn.Module):
    def forward(self, a, b):
        return chamfer_distance(a, b)


def get_inputs():
    return [torch.rand(BATCH, POINTS_A, 3), torch.rand(BATCH, POINTS_B, 3)]


def get_init_inputs():
    return []
