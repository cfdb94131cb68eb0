"""pointkit/voxel-scatter's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): negative coordinates in their own voxels, a cloud around the origin, points
on a voxel boundary belonging to the voxel above."""

import torch

from pointkit import voxel_downsample


class Model(torch.nn.Module):
    def forward(self, points, features):
        device = points.device
        signs = torch.tensor([[-0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [-1.5, -0.2, 0.1], [-0.1, 0.2, 0.3]], device=device)
        boundary = torch.tensor([[1.0, 0.0, 0.0], [0.999, 0.0, 0.0], [-1.0, 0.0, 0.0], [-1.001, 0.0, 0.0]],
                                device=device)
        centroids, _, counts = voxel_downsample(signs, 1.0)
        around = voxel_downsample(points * 3, 0.75, features)
        _, _, on_boundary = voxel_downsample(boundary, 1.0)
        return (centroids, counts, *around, on_boundary)


def get_inputs():
    return [torch.randn(2000, 3), torch.randn(2000, 4)]


def get_init_inputs():
    return []
