"""Grouped-query attention: query head h reads key-value head h // (n_heads / n_kv_heads),
checked head by head against a naive computation, with and without the cache."""

import math

import pytest
import torch

from tinylm.testing import tiny_model


def naive(attn, rope, x):
    """Causal attention over x (B, T, dim) from position 0, head by head, in float64."""
    B, T, _ = x.shape
    H, D, KV = attn.n_heads, attn.head_dim, attn.n_kv_heads
    q = (x @ attn.wq.weight.T).view(B, T, H, D)
    k = (x @ attn.wk.weight.T).view(B, T, KV, D)
    v = (x @ attn.wv.weight.T).view(B, T, KV, D).double()
    q, k = rope(q, k, torch.arange(T, device=x.device).expand(B, T))
    q, k = q.double(), k.double()
    out = torch.zeros(B, T, H, D, dtype=torch.float64, device=x.device)
    for h in range(H):
        kv = h // (H // KV)
        scores = q[:, :, h] @ k[:, :, kv].transpose(1, 2) / math.sqrt(D)
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
        out[:, :, h] = scores.softmax(-1) @ v[:, :, kv]
    return out.reshape(B, T, H * D).float() @ attn.wo.weight.T


@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (4, 1), (8, 2)])
def test_grouped_attention_matches_head_by_head(heads, kv_heads, device):
    model = tiny_model(seed=heads + kv_heads, n_heads=heads, n_kv_heads=kv_heads).to(device)
    attn = model.layers[0].attention
    x = torch.randn(2, 6, 32).to(device)
    out = attn(x, model.rotary, torch.arange(6, device=device).expand(2, 6))
    torch.testing.assert_close(out, naive(attn, model.rotary, x), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (8, 2)])
def test_grouped_decoding_matches_head_by_head(heads, kv_heads, device):
    model = tiny_model(seed=1, n_heads=heads, n_kv_heads=kv_heads).to(device)
    attn = model.layers[0].attention
    x = torch.randn(2, 7, 32).to(device)
    cache = model.new_cache(2, 12)
    parts = [attn(x[:, :4], model.rotary, torch.arange(4, device=device).expand(2, 4), cache, 0, 0)]
    for t in range(4, 7):
        parts.append(attn(x[:, t:t + 1], model.rotary, torch.tensor([[t], [t]], device=device), cache, 0, t))
    torch.testing.assert_close(torch.cat(parts, dim=1), naive(attn, model.rotary, x), atol=1e-5, rtol=1e-4)


def test_a_chunk_after_the_prompt_sees_the_prompt_and_itself_causally(device):
    model = tiny_model(seed=2, n_heads=4, n_kv_heads=2).to(device)
    attn = model.layers[0].attention
    x = torch.randn(1, 8, 32).to(device)
    cache = model.new_cache(1, 8)
    first = attn(x[:, :5], model.rotary, torch.arange(5, device=device)[None], cache, 0, 0)
    second = attn(x[:, 5:], model.rotary, torch.arange(5, 8, device=device)[None], cache, 0, 5)
    torch.testing.assert_close(torch.cat([first, second], 1), naive(attn, model.rotary, x), atol=1e-5, rtol=1e-4)


def test_per_sequence_positions_with_grouped_heads(device):
    model = tiny_model(seed=3, n_heads=4, n_kv_heads=2).to(device)
    tokens = torch.randint(0, 97, (2, 6)).to(device)
    full = model(tokens)
    cache = model.new_cache(2, 8)
    model.prefill(tokens[:, :5], cache)
    out = model.decode(tokens[:, 5], cache, torch.tensor([5, 5], device=device))
    torch.testing.assert_close(out, full[:, 5], atol=1e-4, rtol=1e-4)
