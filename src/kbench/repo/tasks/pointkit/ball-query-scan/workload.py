"""pointkit/ball-query-scan: PointNet++ grouping: up to 32 neighbours within a radius of each centre.

Coordinates are quantised to a grid (EXTENT steps a side) and the radius falls between
grid distances, so which points are inside is exact in any implementation.
"""

import torch

from pointkit import ball_query

BATCH = 8
POINTS = 8192
CENTERS = 1024
EXTENT = 256
RADIUS = 20.5
NEIGHBORS = 32
KBENCH_SMALL = {"BATCH": 2, "POINTS": 64, "CENTERS": 8, "EXTENT": 16, "RADIUS": 4.5, "NEIGHBORS": 8}


class Model(torch.nn.Module):
    def __init__(self, radius, neighbors):
        super().__init__()
        self.radius = radius
        self.neighbors = neighbors

    def forward(self, points, centers):
        return ball_query(points, centers, self.radius, self.neighbors)


def get_inputs():
    return [torch.randint(0, EXTENT, (BATCH, POINTS, 3)).float(),
            torch.randint(0, EXTENT, (BATCH, CENTERS, 3)).float()]


def get_init_inputs():
    return [RADIUS, NEIGHBORS]
