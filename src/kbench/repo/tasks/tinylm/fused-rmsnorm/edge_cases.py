"""tinylm/fused-rmsnorm's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): widths that are not powers of two, a row of zeros, eps against a tiny mean
square, strided and column-major rows, bfloat16 inputs computed in float32, values near float32's range."""

import torch

from tinylm.norm import RMSNorm, rms_norm


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.module = RMSNorm(64)

    def forward(self, x, weight):
        ones = torch.ones(64, device=x.device)
        outs = [rms_norm(x[:, :width], weight[:width], 1e-5) for width in (96, 200, 1000)]
        zero = x[:3, :64].clone()
        zero[1] = 0
        outs.append(rms_norm(zero, ones, 1e-6))
        outs.append(rms_norm(torch.full((2, 64), 1e-3, device=x.device), ones, 1e-5))
        outs.append(rms_norm(x[:, :640].reshape(6, 10, 64)[:, ::2], weight[:64], 1e-5))  # rows apart
        outs.append(rms_norm(x[:, :64].t().contiguous().t(), weight[:64], 1e-5))  # columns contiguous
        outs.append(rms_norm((x[:4, :64] * 30).to(torch.bfloat16), weight[:64], 1e-5))
        outs.append(self.module(x[:2, :64] * 1e15))
        outs.append(self.module(x[:2, :64] * 1e-12))
        return tuple(outs)


def get_inputs():
    return [torch.randn(6, 1000) * 2, torch.randn(1000)]


def get_init_inputs():
    return []
