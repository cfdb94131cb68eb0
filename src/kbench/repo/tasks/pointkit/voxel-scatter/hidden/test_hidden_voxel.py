"""Voxel downsampling across the origin and on voxel boundaries."""

import torch

from pointkit import voxel_downsample


def by_definition(points, size, features):
    keys = torch.floor(points / size).long()
    out = {}
    for key in sorted(set(map(tuple, keys.tolist()))):
        members = (keys == torch.tensor(key, device=keys.device)).all(-1)
        out[key] = (points[members].mean(0), features[members].mean(0), int(members.sum()))
    return out


def test_negative_coordinates_fall_in_their_own_voxels(device):
    points = torch.tensor([[-0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [-1.5, -0.2, 0.1], [-0.1, 0.2, 0.3]], device=device)
    centroids, _, counts = voxel_downsample(points, 1.0)
    assert counts.tolist() == [1, 2, 1]
    torch.testing.assert_close(centroids, torch.tensor([[-1.5, -0.2, 0.1], [-0.3, 0.35, 0.4], [0.5, 0.5, 0.5]],
                                                       device=device))


def test_a_cloud_around_the_origin_matches_the_definition(device):
    torch.manual_seed(0)
    points = (torch.randn(2000, 3) * 3).to(device)
    features = torch.randn(2000, 4).to(device)
    centroids, means, counts = voxel_downsample(points, 0.75, features)
    want = by_definition(points, 0.75, features)
    assert counts.tolist() == [c for _, _, c in want.values()]
    torch.testing.assert_close(centroids, torch.stack([c for c, _, _ in want.values()]))
    torch.testing.assert_close(means, torch.stack([m for _, m, _ in want.values()]))


def test_points_on_a_boundary_belong_to_the_voxel_above(device):
    points = torch.tensor([[1.0, 0.0, 0.0], [0.999, 0.0, 0.0], [-1.0, 0.0, 0.0], [-1.001, 0.0, 0.0]], device=device)
    _, _, counts = voxel_downsample(points, 1.0)
    assert counts.tolist() == [1, 1, 1, 1]
