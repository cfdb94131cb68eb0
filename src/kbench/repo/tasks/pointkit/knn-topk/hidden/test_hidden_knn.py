"""kNN on clouds far from the origin (map coordinates) and at the edges of k."""

import torch

from pointkit import knn


def reference(query, points, k):
    d = ((query.double()[:, :, None] - points.double()[:, None]) ** 2).sum(-1)
    return d.sort(-1)


def test_distances_stay_exact_far_from_the_origin(device):
    torch.manual_seed(0)
    offset = torch.tensor([4200.0, -1300.0, 250.0])
    points = (torch.rand(2, 300, 3) * 20 + offset).to(device)
    query = (torch.rand(2, 100, 3) * 20 + offset).to(device)
    dists, idx = knn(query, points, 8)
    want, order = reference(query, points, 8)
    torch.testing.assert_close(dists.double(), want[..., :8], atol=1e-3, rtol=1e-4)
    assert (dists >= 0).all()


def test_a_point_far_from_the_origin_is_at_distance_zero_from_itself(device):
    torch.manual_seed(1)
    points = (torch.rand(1, 200, 3) * 50 + 1000.0).to(device)
    dists, idx = knn(points, points, 2)
    assert torch.equal(dists[..., 0], torch.zeros(1, 200, device=device))
    assert torch.equal(idx[0, :, 0], torch.arange(200, device=device))


def test_k_equal_to_the_cloud_orders_every_point(device):
    torch.manual_seed(2)
    query, points = torch.rand(2, 10, 3).to(device), torch.rand(2, 30, 3).to(device)
    dists, idx = knn(query, points, 30)
    want, order = reference(query, points, 30)
    torch.testing.assert_close(dists.double(), want, atol=1e-6, rtol=1e-5)
    assert torch.equal(idx, order)
    assert (dists[..., 1:] >= dists[..., :-1]).all()
