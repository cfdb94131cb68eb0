"""pointkit/fps-batched: farthest point sampling of a batch of scans.

Coordinates are quantised to a 1024-step grid (as a voxelised scan stores them), so
squared distances are exact integers in float32 and every implementation picks the
same points: among equally far points the lowest index, as pointkit documents.
"""

import torch

from pointkit import farthest_point_sample

BATCH = 4
POINTS = 8192
SAMPLES = 256
KBENCH_SMALL = {"BATCH": 2, "POINTS": 64, "SAMPLES": 8}


class Model(torch.nn.Module):
    def __init__(self, n_samples):
        super().__init__()
        self.n_samples = n_samples

    def forward(self, points):
        return farthest_point_sample(points, self.n_samples)


def get_inputs():
    return [torch.randint(0, 1024, (BATCH, POINTS, 3)).float()]


def get_init_inputs():
    return [SAMPLES]
