"""Prefill of right-padded prompts of different lengths: each row's logits at its own last token."""

import torch

from tinylm.testing import tiny_model


def test_each_prompt_gets_the_logits_of_its_own_last_token(device):
    model = tiny_model(seed=8).to(device)
    tokens = torch.randint(0, 97, (4, 9)).to(device)
    lengths = torch.tensor([9, 3, 1, 6], device=device)
    out = model.prefill(tokens, model.new_cache(4, 16), lengths)
    full = model(tokens)
    assert out.shape == (4, 97)
    for b, n in enumerate(lengths.tolist()):
        torch.testing.assert_close(out[b], full[b, n - 1], atol=1e-5, rtol=1e-4)


def test_decoding_after_a_padded_prefill_continues_each_prompt(device):
    model = tiny_model(seed=9).to(device)
    prompts = [torch.randint(0, 97, (n,)).to(device) for n in (5, 2, 7)]
    padded = torch.zeros(3, 7, dtype=torch.long, device=device)
    for b, p in enumerate(prompts):
        padded[b, :p.shape[0]] = p
    lengths = torch.tensor([5, 2, 7], device=device)
    cache = model.new_cache(3, 16)
    first = model.prefill(padded, cache, lengths)
    nxt = first.argmax(-1)
    second = model.decode(nxt, cache, lengths)
    for b, p in enumerate(prompts):
        whole = torch.cat([p, nxt[b:b + 1]])[None]
        torch.testing.assert_close(second[b], model(whole)[0, -1], atol=1e-4, rtol=1e-4)


def test_batched_prompts_of_one_length(device):
    model = tiny_model(seed=10).to(device)
    tokens = torch.randint(0, 97, (3, 6)).to(device)
    full = model(tokens)
    torch.testing.assert_close(model.prefill(tokens, model.new_cache(3, 8)), full[:, -1], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(model.prefill(tokens, model.new_cache(3, 8), torch.tensor([6, 6, 6], device=device)),
                               full[:, -1], atol=1e-5, rtol=1e-4)
