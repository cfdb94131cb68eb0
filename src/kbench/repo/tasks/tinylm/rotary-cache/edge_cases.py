"""tinylm/rotary-cache's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): large positions keep their precision, every call uses its own positions,
modules with different settings do not share tables, batches of different sizes on one module."""

import torch

from tinylm.rotary import RotaryEmbedding

SETTINGS = ((10000.0, 64), (500.0, 64), (10000.0, 128), (1e6, 64))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.long = RotaryEmbedding(16, 131072, theta=500000.0)
        self.short = RotaryEmbedding(8, 256)
        self.batches = RotaryEmbedding(8, 64)

    def forward(self, q, k):
        device = q.device
        outs = list(self.long(q[:1, :4, :2], k[:1, :4, :1], torch.tensor([[131071, 100003, 65537, 77777]], device=device)))
        for positions in ([[0, 1, 2]], [[200, 3, 255]], [[7, 7, 7]]):
            outs += self.short(q[:1, :3, :2, :8], k[:1, :3, :2, :8], torch.tensor(positions, device=device))
        for theta, length in SETTINGS:
            outs += RotaryEmbedding(8, length, theta).to(device)(q[:1, :2, :1, :8], k[:1, :2, :1, :8],
                                                                 torch.tensor([[5, 40]], device=device))
        for batch in (1, 3, 2):
            positions = torch.arange(2 * batch, device=device).view(batch, 2) * 7 % 64
            outs += self.batches(q[:batch, :2, :4, :8], q[:batch, :2, :2, :8], positions)
        return tuple(outs)


def get_inputs():
    return [torch.randn(3, 4, 4, 16), torch.randn(3, 4, 2, 16)]


def get_init_inputs():
    return []
