"""tinylm/top-k-select's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): ties with the k-th value, k at or beyond the vocabulary, rows with fewer finite
values than k, more leading dimensions and none."""

import torch

from tinylm.sampling import top_k_filter


class Model(torch.nn.Module):
    def forward(self, logits):
        ties = (logits.abs() * 2).floor().clamp(max=5)
        short = logits[:3, :10]
        outs = [top_k_filter(ties, 5), *(top_k_filter(short, k) for k in (10, 11, 1000, 9))]
        sparse = logits[:2, :20].clone()
        sparse[0, 3:] = float("-inf")
        outs.append(top_k_filter(sparse, 5))
        cube = logits.flatten()[:300].view(2, 3, 50)
        outs += [top_k_filter(cube, 4), top_k_filter(cube[0, 0], 4)]
        return tuple(out.clone() for out in outs)  # k at the vocabulary gives the logits back: not an alias


def get_inputs():
    return [torch.randn(8, 40)]


def get_init_inputs():
    return []
