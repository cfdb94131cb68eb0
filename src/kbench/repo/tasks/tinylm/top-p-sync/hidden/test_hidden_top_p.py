"""Nucleus sampling, token for token, against the definition applied row by row."""

import torch

from tinylm.sampling import exponential_noise, sample, sample_top_p


def by_definition(probs, top_p, noise):
    """Per row: sort, keep the tokens whose preceding mass is below top_p, race among them."""
    out = []
    for p, e in zip(probs, noise):
        ordered, order = p.sort(descending=True)
        before = ordered.cumsum(0) - ordered
        keep = order[before < top_p]
        out.append(int(keep[torch.argmax(p[keep] / e[keep])]))
    return torch.tensor(out, device=probs.device)


def test_tokens_match_the_definition_including_the_token_that_crosses_top_p(device):
    torch.manual_seed(0)
    for top_p in (0.3, 0.6, 0.9):
        for seed in range(4):
            logits = (torch.randn(64, 12) * 1.5).to(device)
            probs = logits.softmax(-1)
            noise = exponential_noise((64, 12), torch.Generator().manual_seed(seed)).to(device)
            assert torch.equal(sample_top_p(probs, top_p, noise), by_definition(probs, top_p, noise))


def test_a_tiny_top_p_is_greedy(device):
    torch.manual_seed(1)
    logits = torch.randn(32, 50).to(device)
    noise = exponential_noise((32, 50)).to(device)
    assert torch.equal(sample(logits, 1.0, top_p=1e-6, noise=noise), logits.argmax(-1))


def test_rows_are_sampled_independently(device):
    torch.manual_seed(2)
    logits = (torch.randn(16, 30) * 2).to(device)
    noise = exponential_noise((16, 30)).to(device)
    together = sample(logits, 0.8, top_p=0.7, noise=noise)
    alone = torch.cat([sample(logits[i:i + 1], 0.8, top_p=0.7, noise=noise[i:i + 1]) for i in range(16)])
    assert torch.equal(together, alone)
    perm = torch.randperm(16).to(device)
    assert torch.equal(sample(logits[perm], 0.8, top_p=0.7, noise=noise[perm]), together[perm])


def test_a_top_p_of_one_keeps_every_token(device):
    torch.manual_seed(3)
    probs = torch.randn(8, 20).softmax(-1).to(device)
    noise = exponential_noise((8, 20)).to(device)
    assert torch.equal(sample_top_p(probs, 1.0, noise), (probs / noise).argmax(-1))
