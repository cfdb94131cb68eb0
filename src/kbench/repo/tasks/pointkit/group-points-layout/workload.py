"""pointkit/group-points-layout: gathering neighbourhood features for a PointNet++ set-abstraction layer."""

import torch

from pointkit import group_points

BATCH = 8
CHANNELS = 256
POINTS = 8192
CENTERS = 4096
NEIGHBORS = 32
KBENCH_SMALL = {"BATCH": 2, "CHANNELS": 5, "POINTS": 40, "CENTERS": 6, "NEIGHBORS": 4}


class Model(torch.nn.Module):
    def forward(self, features, idx):
        return group_points(features, idx)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, POINTS), torch.randint(0, POINTS, (BATCH, CENTERS, NEIGHBORS))]


def get_init_inputs():
    return []
