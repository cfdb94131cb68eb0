"""pointkit/ball-query-scan's edge cases: what its hidden tests check, judged against the base revision where
the workload runs (docs/tasks.md): crowded centres keep their first neighbours in index order, sparse ones
are padded with their first, points exactly on the radius, more slots than points."""

import torch

from pointkit import ball_query


class Model(torch.nn.Module):
    def forward(self, points, centers):
        device = points.device
        outs = [*ball_query(points, centers, 0.35, 6), *ball_query(points[:1, :100], centers[:1], 0.15, 8)]
        on_radius = torch.tensor([[[0.0, 0, 0], [3, 0, 0], [2, 0, 0], [0, 3, 0], [1, 1, 1]]], device=device)
        outs += ball_query(on_radius, torch.zeros(1, 1, 3, device=device), 3.0, 4)
        few = points[:1, :3] * 0.1
        outs += ball_query(few, few[:, :1], 1.0, 5)
        return tuple(outs)


def get_inputs():
    return [torch.rand(2, 300, 3), torch.rand(2, 25, 3)]


def get_init_inputs():
    return []
