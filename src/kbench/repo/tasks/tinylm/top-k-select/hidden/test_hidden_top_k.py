"""top_k_filter at its edges: ties with the k-th value, k at the vocabulary, -inf entries, more dimensions."""

import torch

from tinylm.sampling import top_k_filter


def by_definition(logits, k):
    kth = logits.sort(-1, descending=True).values[..., k - 1:k]
    return logits.masked_fill(logits < kth, float("-inf"))


def test_ties_with_the_kth_value_are_kept(device):
    torch.manual_seed(0)
    logits = torch.randint(0, 6, (8, 40)).float().to(device)
    out = top_k_filter(logits, 5)
    assert torch.equal(out, by_definition(logits, 5))
    assert (torch.isfinite(out).sum(-1) >= 5).all()


def test_k_at_or_beyond_the_vocabulary_keeps_everything(device):
    logits = torch.randn(3, 10).to(device)
    for k in (10, 11, 1000):
        assert torch.equal(top_k_filter(logits, k), logits)
    torch.testing.assert_close(top_k_filter(logits, 9), by_definition(logits, 9))


def test_rows_with_fewer_finite_values_than_k(device):
    logits = torch.randn(2, 20).to(device)
    logits[0, 3:] = float("-inf")
    out = top_k_filter(logits, 5)
    assert torch.equal(torch.isfinite(out[0]), torch.isfinite(logits[0]))
    assert torch.isfinite(out[1]).sum() == 5


def test_any_leading_shape(device):
    torch.manual_seed(1)
    logits = torch.randn(2, 3, 50).to(device)
    out = top_k_filter(logits, 4)
    assert out.shape == logits.shape
    assert torch.equal(out, by_definition(logits, 4))
    assert torch.equal(top_k_filter(logits[0, 0], 4), by_definition(logits[0, 0], 4))
