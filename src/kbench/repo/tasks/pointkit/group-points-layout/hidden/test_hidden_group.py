"""group_points on the inputs a pipeline hands it: sliced indices, strided features."""

import torch

from pointkit import ball_query, group_points


def by_definition(features, idx):
    B, C, _ = features.shape
    out = torch.empty(B, C, *idx.shape[1:], dtype=features.dtype, device=features.device)
    for b in range(B):
        out[b] = features[b][:, idx[b]]
    return out


def test_indices_sliced_from_a_ball_query(device):
    torch.manual_seed(0)
    points = torch.rand(2, 120, 3).to(device)
    idx, _ = ball_query(points, points[:, :16], 0.3, 16)
    features = torch.randn(2, 8, 120).to(device)
    first4 = idx[..., :4]  # a view with the strides of the wider result
    assert torch.equal(group_points(features, first4), by_definition(features, first4))


def test_channels_last_features_seen_as_channels_first(device):
    torch.manual_seed(1)
    features = torch.randn(2, 50, 6).to(device).transpose(1, 2)  # (2, 6, 50), channels not contiguous
    idx = torch.randint(0, 50, (2, 9, 3)).to(device)
    assert torch.equal(group_points(features, idx), by_definition(features, idx))


def test_transposed_indices(device):
    torch.manual_seed(2)
    features = torch.randn(1, 4, 30).to(device)
    idx = torch.randint(0, 30, (1, 5, 7)).to(device).transpose(1, 2)  # (1, 7, 5)
    assert torch.equal(group_points(features, idx), by_definition(features, idx))


def test_an_empty_group(device):
    features = torch.randn(2, 3, 10, device=device)
    assert group_points(features, torch.zeros(2, 0, 4, dtype=torch.long, device=device)).shape == (2, 3, 0, 4)
