"""Chamfer distance on batches of clouds of different sizes, against float64."""

import torch

from pointkit import chamfer_distance


def reference(a, b):
    d = ((a.double()[:, :, None] - b.double()[:, None]) ** 2).sum(-1)
    return d.min(2).values.mean(1) + d.min(1).values.mean(1)


def test_clouds_of_different_sizes_in_a_batch(device):
    torch.manual_seed(0)
    a, b = torch.rand(3, 70, 3).to(device), (torch.rand(3, 150, 3) + 0.1).to(device)
    torch.testing.assert_close(chamfer_distance(a, b).double(), reference(a, b), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(chamfer_distance(b, a).double(), reference(b, a), atol=1e-6, rtol=1e-5)


def test_sizes_that_do_not_fill_a_block(device):
    torch.manual_seed(1)
    for n, m in ((1, 1), (5, 3), (129, 65), (200, 100)):
        a, b = torch.randn(2, n, 3).to(device), torch.randn(2, m, 3).to(device)
        torch.testing.assert_close(chamfer_distance(a, b).double(), reference(a, b), atol=1e-6, rtol=1e-5)


def test_each_batch_entry_is_its_own_pair(device):
    torch.manual_seed(2)
    a, b = torch.rand(4, 40, 3).to(device), torch.rand(4, 90, 3).to(device)
    a[2] += 5
    together = chamfer_distance(a, b)
    alone = torch.cat([chamfer_distance(a[i:i + 1], b[i:i + 1]) for i in range(4)])
    torch.testing.assert_close(together, alone)
    torch.testing.assert_close(together.double(), reference(a, b), atol=1e-6, rtol=1e-5)


def test_strided_clouds(device):
    torch.manual_seed(3)
    a = torch.rand(2, 3, 60).to(device).transpose(1, 2)
    b = torch.rand(2, 80, 6).to(device)[:, :, 1:4]
    torch.testing.assert_close(chamfer_distance(a, b).double(), reference(a, b), atol=1e-6, rtol=1e-5)
