"""Farthest point sampling, index for index, against the greedy definition in float64, cloud by cloud."""

import torch

from pointkit import farthest_point_sample


def by_definition(cloud, n, start):
    cloud = cloud.double()
    nearest = torch.full((cloud.shape[0],), float("inf"), dtype=torch.float64, device=cloud.device)
    chosen = [start]
    for _ in range(n - 1):
        nearest = torch.minimum(nearest, ((cloud - cloud[chosen[-1]]) ** 2).sum(-1))
        chosen.append(int(nearest.argmax()))
    return chosen


def test_each_cloud_of_a_batch_is_sampled_on_its_own(device):
    torch.manual_seed(0)
    points = torch.rand(3, 500, 3)
    points[1] *= 40
    points[2] -= 20
    points = points.to(device)
    idx = farthest_point_sample(points, 64)
    for b in range(3):
        assert idx[b].tolist() == by_definition(points[b], 64, 0)


def test_start_is_honoured_for_every_cloud(device):
    torch.manual_seed(1)
    points = torch.rand(2, 200, 3).to(device)
    idx = farthest_point_sample(points, 20, start=17)
    for b in range(2):
        assert idx[b].tolist() == by_definition(points[b], 20, 17)


def test_quantised_clouds_with_large_coordinates_and_ties(device):
    torch.manual_seed(2)
    points = torch.randint(0, 1024, (2, 300, 3)).float().to(device)
    points[:, 100:110] = points[:, :10]  # duplicates: ties go to the lowest index
    idx = farthest_point_sample(points, 40)
    for b in range(2):
        assert idx[b].tolist() == by_definition(points[b], 40, 0)


def test_sampling_every_point_gives_a_permutation(device):
    torch.manual_seed(3)
    idx = farthest_point_sample(torch.rand(2, 50, 3).to(device), 50)
    assert all(sorted(row) == list(range(50)) for row in idx.tolist())
