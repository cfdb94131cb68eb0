"""Rotary embeddings: exact at large positions, and right on every call of a module, not just the first."""

import torch

from tinylm.rotary import RotaryEmbedding


def rotate64(x, positions, theta):
    """The rotation computed from scratch in float64."""
    D = x.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float64, device=x.device) / D)
    angles = positions.double()[..., None] * inv_freq  # (B, T, D/2)
    c, s = angles.cos()[:, :, None], angles.sin()[:, :, None]
    x1, x2 = x[..., :D // 2].double(), x[..., D // 2:].double()
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)


def test_large_positions_keep_their_precision(device):
    torch.manual_seed(0)
    rope = RotaryEmbedding(16, 131072, theta=500000.0).to(device)
    q, k = torch.randn(1, 4, 2, 16).to(device), torch.randn(1, 4, 1, 16).to(device)
    positions = torch.tensor([[131071, 100003, 65537, 77777]], device=device)
    q2, k2 = rope(q, k, positions)
    torch.testing.assert_close(q2.double(), rotate64(q, positions, 500000.0), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(k2.double(), rotate64(k, positions, 500000.0), atol=1e-5, rtol=1e-5)


def test_every_call_uses_its_own_positions(device):
    torch.manual_seed(1)
    rope = RotaryEmbedding(8, 256).to(device)
    for positions in ([[0, 1, 2]], [[200, 3, 255]], [[7, 7, 7]]):
        positions = torch.tensor(positions, device=device)
        q, k = torch.randn(1, 3, 2, 8).to(device), torch.randn(1, 3, 2, 8).to(device)
        q2, k2 = rope(q, k, positions)
        torch.testing.assert_close(q2.double(), rotate64(q, positions, 10000.0), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(k2.double(), rotate64(k, positions, 10000.0), atol=1e-5, rtol=1e-5)


def test_modules_with_different_settings_do_not_share_tables(device):
    torch.manual_seed(2)
    q, k = torch.randn(1, 2, 1, 8).to(device), torch.randn(1, 2, 1, 8).to(device)
    positions = torch.tensor([[5, 40]], device=device)
    for theta, length in ((10000.0, 64), (500.0, 64), (10000.0, 128), (1e6, 64)):
        q2, _ = RotaryEmbedding(8, length, theta).to(device)(q, k, positions)
        torch.testing.assert_close(q2.double(), rotate64(q, positions, theta), atol=1e-5, rtol=1e-5)


def test_batches_of_different_sizes_on_one_module(device):
    torch.manual_seed(3)
    rope = RotaryEmbedding(8, 64).to(device)
    for batch in (1, 3, 2):
        positions = torch.randint(0, 64, (batch, 2)).to(device)
        q = torch.randn(batch, 2, 4, 8).to(device)
        q2, _ = rope(q, q[:, :, :2], positions)
        torch.testing.assert_close(q2.double(), rotate64(q, positions, 10000.0), atol=1e-5, rtol=1e-5)
