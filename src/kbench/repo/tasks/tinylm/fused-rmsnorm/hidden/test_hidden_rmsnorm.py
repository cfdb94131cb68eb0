"""RMSNorm on the shapes, layouts and values real models give it, against the formula in float64."""

import pytest
import torch

from tinylm.norm import RMSNorm, rms_norm


def reference(x, weight, eps):
    x64 = x.double()
    return x64 / torch.sqrt(x64.pow(2).mean(-1, keepdim=True) + eps) * weight.double()


@pytest.mark.parametrize("width", [96, 200, 1000])
def test_widths_that_are_not_powers_of_two(width, device):
    torch.manual_seed(width)
    x, weight = (torch.randn(5, width) * 2).to(device), torch.randn(width).to(device)
    torch.testing.assert_close(rms_norm(x, weight, 1e-5).double(), reference(x, weight, 1e-5), atol=1e-5, rtol=1e-4)


def test_a_row_of_zeros_stays_zero(device):
    x = torch.randn(3, 64).to(device)
    x[1] = 0
    out = rms_norm(x, torch.ones(64, device=device), 1e-6)
    assert torch.isfinite(out).all()
    assert torch.equal(out[1], torch.zeros(64, device=device))


def test_eps_is_added_to_the_mean_square(device):
    x = torch.full((2, 64), 1e-3, device=device)
    weight = torch.ones(64, device=device)
    out = rms_norm(x, weight, 1e-5)
    torch.testing.assert_close(out.double(), reference(x, weight, 1e-5), atol=1e-6, rtol=1e-5)


def test_strided_inputs_keep_their_shape_and_values(device):
    torch.manual_seed(0)
    big = torch.randn(4, 6, 128).to(device)
    x = big[:, ::2, 32:96]  # (4, 3, 64), neither row is contiguous with the next
    weight = torch.randn(64).to(device)
    out = rms_norm(x, weight, 1e-5)
    assert out.shape == (4, 3, 64)
    torch.testing.assert_close(out.double(), reference(x, weight, 1e-5), atol=1e-5, rtol=1e-4)
    xt = torch.randn(64, 5).to(device).t()  # (5, 64), columns contiguous
    torch.testing.assert_close(rms_norm(xt, weight, 1e-5).double(), reference(xt, weight, 1e-5), atol=1e-5, rtol=1e-4)


def test_half_precision_inputs_are_normalised_in_float32(device):
    torch.manual_seed(0)
    x = (torch.randn(4, 64) * 30).to(device, torch.bfloat16)
    weight = torch.randn(64).to(device)
    out = rms_norm(x, weight, 1e-5)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.double(), reference(x, weight, 1e-5), atol=2e-2, rtol=2e-2)


def test_large_values_do_not_overflow(device):
    x = (torch.randn(2, 64) * 1e15).to(device)
    out = RMSNorm(64).to(device)(x)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out.pow(2).mean(-1), torch.ones(2, device=device), atol=1e-4, rtol=1e-4)
