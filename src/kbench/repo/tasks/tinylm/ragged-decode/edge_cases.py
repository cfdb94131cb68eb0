"""tinylm/ragged-decode's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): sequences decoding at different positions, chunks at different positions
(causal within each sequence), a sequence at position zero beside a long one."""

import torch

from tinylm.testing import tiny_model


def _prefilled(model, tokens, lengths, max_len):
    device = tokens.device
    starts = torch.tensor(lengths, device=device)
    width = max(lengths)
    padded = tokens[:len(lengths), :width].masked_fill(torch.arange(width, device=device) >= starts[:, None], 0)
    cache = model.new_cache(len(lengths), max_len, device=device)
    model.prefill(padded, cache)
    return cache, starts


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.decoding, self.chunks, self.zero = tiny_model(seed=5), tiny_model(seed=6), tiny_model(seed=7)

    def forward(self, tokens):
        device = tokens.device
        cache, starts = _prefilled(self.decoding, tokens, [3, 9, 1, 6], 32)
        outs = [self.decoding.decode(tokens[:, 9], cache, starts), self.decoding.decode(tokens[:, 10], cache, starts + 1)]
        cache, starts = _prefilled(self.chunks, tokens, [2, 7, 4], 32)
        outs.append(self.chunks(tokens[:3, 9:12], cache, starts))
        cache = self.zero.new_cache(2, 16, device=device)
        self.zero.prefill(tokens[:2, :8], cache)
        outs.append(self.zero.decode(tokens[:2, 8], cache, torch.tensor([0, 8], device=device)))
        return tuple(outs)


def get_inputs():
    return [torch.randint(0, 97, (4, 12))]


def get_init_inputs():
    return []
