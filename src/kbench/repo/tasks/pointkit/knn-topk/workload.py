"""pointkit/knn-topk: the 16 nearest neighbours of every point of a batch of clouds.

The output is the neighbours' squared distances, nearest first: indices of neighbours
at equal distance may come in either order, their distances may not.
"""

import torch

from pointkit import knn

BATCH = 8
QUERIES = 4096
POINTS = 4096
K = 16
KBENCH_SMALL = {"BATCH": 2, "QUERIES": 32, "POINTS": 48, "K": 4}


class Model(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, query, points):
        dists, _ = knn(query, points, self.k)
        return dists


def get_inputs():
    return [torch.rand(BATCH, QUERIES, 3), torch.rand(BATCH, POINTS, 3)]


def get_init_inputs():
    return [K]
