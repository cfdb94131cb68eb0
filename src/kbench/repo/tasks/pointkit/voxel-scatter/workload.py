"""pointkit/voxel-scatter: voxel-grid downsampling of a scan with per-point features (1 m voxels)."""

import torch

from pointkit import voxel_downsample

POINTS = 2000000
FEATURES = 16
EXTENT = 4.0
KBENCH_SMALL = {"POINTS": 300, "FEATURES": 4, "EXTENT": 2.0}


class Model(torch.nn.Module):
    def __init__(self, voxel_size):
        super().__init__()
        self.voxel_size = voxel_size

    def forward(self, points, features):
        return voxel_downsample(points, self.voxel_size, features)


def get_inputs():
    return [(torch.rand(POINTS, 3) * 2 - 1) * EXTENT, torch.randn(POINTS, FEATURES)]


def get_init_inputs():
    return [1.0]
