"""tinylm/top-p-sync's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): the token that crosses top_p is kept, a tiny top_p is greedy, rows are sampled
independently of their order, a top_p of one keeps every token."""

import torch

from tinylm.sampling import sample, sample_top_p


class Model(torch.nn.Module):
    def forward(self, logits, noise):
        probs = (logits[:, :12] * 1.5).softmax(-1)
        outs = [sample_top_p(probs, top_p, noise[:, :12]) for top_p in (0.3, 0.6, 0.9)]
        outs.append(sample(logits[:32], 1.0, top_p=1e-6, noise=noise[:32]))
        outs.append(sample(logits[:16, :30] * 2, 0.8, top_p=0.7, noise=noise[:16, :30]))
        outs.append(sample(logits[:16, :30].flip(0) * 2, 0.8, top_p=0.7, noise=noise[:16, :30].flip(0)))
        outs.append(sample_top_p(logits[:8, :20].softmax(-1), 1.0, noise[:8, :20]))
        return tuple(outs)


def get_inputs():
    return [torch.randn(64, 50), torch.empty(64, 50).exponential_()]


def get_init_inputs():
    return []
