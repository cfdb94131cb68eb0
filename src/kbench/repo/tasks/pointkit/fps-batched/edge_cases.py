"""pointkit/fps-batched's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): clouds of very different scales in one batch, a start other than 0,
quantised clouds with duplicate points (ties go to the lowest index), sampling every point."""

import torch

from pointkit import farthest_point_sample


class Model(torch.nn.Module):
    def forward(self, points):
        scaled = points.clone()
        scaled[1] *= 40
        scaled[2] -= 20
        quantised = (points[:2, :300] * 1024).floor()
        quantised[:, 100:110] = quantised[:, :10]
        return (farthest_point_sample(scaled, 64), farthest_point_sample(points[:2, :200], 20, start=17),
                farthest_point_sample(quantised, 40), farthest_point_sample(points[:2, :50], 50))


def get_inputs():
    return [torch.rand(3, 500, 3)]


def get_init_inputs():
    return []
