"""pointkit/knn-topk's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): clouds far from the origin (map coordinates), a point at distance zero from
itself, k equal to the cloud. Distances within the hidden tests' own tolerance."""

import torch

from pointkit import knn

KBENCH_TOLERANCE = {"float32": {"atol": 1e-3, "rtol": 1e-4}}


class Model(torch.nn.Module):
    def forward(self, query, points):
        offset = torch.tensor([4200.0, -1300.0, 250.0], device=query.device)
        far, _ = knn(query * 20 + offset, points * 20 + offset, 8)
        cloud = points[:1, :200] * 50 + 1000.0
        itself, own = knn(cloud, cloud, 2)
        every, order = knn(query[:, :10], points[:, :30], 30)
        return far, itself[..., 0], own[..., 0], every, order


def get_inputs():
    return [torch.rand(2, 100, 3), torch.rand(2, 300, 3)]


def get_init_inputs():
    return []
