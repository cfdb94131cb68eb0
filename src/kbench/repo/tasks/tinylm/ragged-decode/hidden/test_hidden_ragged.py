"""Sequences at different positions in one batch: each must see exactly its own prefix."""

import torch

from tinylm.testing import tiny_model


def alone(model, prompt, tokens):
    """Logits for ``tokens`` (T,) fed after ``prompt`` (P,) in a batch of one, at shared positions."""
    cache = model.new_cache(1, 32)
    model.prefill(prompt[None], cache)
    return model(tokens[None], cache, prompt.shape[0])[0]


def test_decoding_at_different_positions_matches_each_sequence_alone(device):
    model = tiny_model(seed=5).to(device)
    lengths = [3, 9, 1, 6]
    prompts = [torch.randint(0, 97, (n,)).to(device) for n in lengths]
    padded = torch.zeros(4, 9, dtype=torch.long, device=device)
    for b, p in enumerate(prompts):
        padded[b, :p.shape[0]] = p
    cache = model.new_cache(4, 32)
    model.prefill(padded, cache)
    nxt = torch.randint(0, 97, (4, 2)).to(device)
    starts = torch.tensor(lengths, device=device)
    steps = [model.decode(nxt[:, 0], cache, starts), model.decode(nxt[:, 1], cache, starts + 1)]
    for b, p in enumerate(prompts):
        torch.testing.assert_close(torch.stack([s[b] for s in steps]), alone(model, p, nxt[b]), atol=1e-4, rtol=1e-4)


def test_chunks_at_different_positions_are_causal_within_each_sequence(device):
    model = tiny_model(seed=6).to(device)
    lengths = [2, 7, 4]
    prompts = [torch.randint(0, 97, (n,)).to(device) for n in lengths]
    padded = torch.zeros(3, 7, dtype=torch.long, device=device)
    for b, p in enumerate(prompts):
        padded[b, :p.shape[0]] = p
    cache = model.new_cache(3, 32)
    model.prefill(padded, cache)
    chunk = torch.randint(0, 97, (3, 3)).to(device)
    out = model(chunk, cache, torch.tensor(lengths, device=device))
    for b, p in enumerate(prompts):
        torch.testing.assert_close(out[b], alone(model, p, chunk[b]), atol=1e-4, rtol=1e-4)


def test_a_sequence_at_position_zero_sees_only_itself(device):
    model = tiny_model(seed=7).to(device)
    cache = model.new_cache(2, 16)
    model.prefill(torch.randint(0, 97, (2, 8)).to(device), cache)
    tok = torch.randint(0, 97, (2,)).to(device)
    out = model.decode(tok, cache, torch.tensor([0, 8], device=device))
    torch.testing.assert_close(out[0], model(tok[:1, None])[0, 0], atol=1e-4, rtol=1e-4)
