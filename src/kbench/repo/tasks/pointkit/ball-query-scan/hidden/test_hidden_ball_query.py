"""Ball query returns the first neighbours in index order (PointNet++'s contract), not the nearest."""

import torch

from pointkit import ball_query


def by_definition(points, centers, radius, k):
    d = ((centers[:, :, None] - points[:, None]) ** 2).sum(-1)
    out = torch.zeros(*d.shape[:2], k, dtype=torch.long)
    counts = torch.zeros(d.shape[:2], dtype=torch.long)
    for b in range(d.shape[0]):
        for s in range(d.shape[1]):
            found = torch.nonzero(d[b, s] < radius * radius).flatten()[:k].tolist()
            counts[b, s] = len(found)
            out[b, s] = torch.tensor((found + [found[0]] * (k - len(found))) if found else [0] * k)
    return out.to(points.device), counts.to(points.device)


def test_crowded_centres_keep_their_first_neighbours_in_index_order(device):
    torch.manual_seed(0)
    points = torch.rand(2, 300, 3).to(device)
    centers = torch.rand(2, 25, 3).to(device)
    idx, counts = ball_query(points, centers, 0.35, 6)
    want, want_counts = by_definition(points, centers, 0.35, 6)
    assert torch.equal(counts, want_counts) and (counts == 6).any()
    assert torch.equal(idx, want)


def test_sparse_centres_are_padded_with_their_first_neighbour(device):
    torch.manual_seed(1)
    points = torch.rand(1, 100, 3).to(device)
    centers = torch.rand(1, 30, 3).to(device)
    idx, counts = ball_query(points, centers, 0.15, 8)
    want, want_counts = by_definition(points, centers, 0.15, 8)
    assert torch.equal(counts, want_counts) and (counts < 8).any()
    assert torch.equal(idx, want)


def test_quantised_clouds_on_the_radius(device):
    points = torch.tensor([[[0.0, 0, 0], [3, 0, 0], [2, 0, 0], [0, 3, 0], [1, 1, 1]]], device=device)
    idx, counts = ball_query(points, torch.zeros(1, 1, 3, device=device), 3.0, 4)
    assert idx.tolist() == [[[0, 2, 4, 0]]] and counts.tolist() == [[3]]


def test_more_slots_than_points(device):
    points = (torch.rand(1, 3, 3) * 0.1).to(device)
    idx, counts = ball_query(points, points[:, :1], 1.0, 5)
    assert idx.tolist() == [[[0, 1, 2, 0, 0]]] and counts.tolist() == [[3]]
