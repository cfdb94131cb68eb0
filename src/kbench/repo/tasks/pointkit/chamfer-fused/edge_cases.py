"""pointkit/chamfer-fused's edge cases: what its hidden tests check, judged against the base revision where the
workload runs (docs/tasks.md): clouds of different sizes either way round, sizes that do not fill a block,
one batch entry far from the others, strided clouds."""

import torch

from pointkit import chamfer_distance


class Model(torch.nn.Module):
    def forward(self, a, b):
        outs = [chamfer_distance(a[:3, :70], b[:3] + 0.1), chamfer_distance(b[:3] + 0.1, a[:3, :70])]
        outs += [chamfer_distance(a[:2, :n] * 2 - 1, b[:2, :m] * 2 - 1) for n, m in ((1, 1), (5, 3), (129, 65), (200, 100))]
        apart = a[:, :40].clone()
        apart[2] += 5
        outs.append(chamfer_distance(apart, b[:, :90]))
        outs.append(chamfer_distance(a[:2, :60].transpose(1, 2).contiguous().transpose(1, 2),
                                     b[:2, :80].repeat(1, 1, 2)[:, :, 1:4]))
        return tuple(outs)


def get_inputs():
    return [torch.rand(4, 200, 3), torch.rand(4, 150, 3)]


def get_init_inputs():
    return []
