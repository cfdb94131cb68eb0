"""pointkit/group-points-layout's edge cases: what its hidden tests check, judged against the base revision
where the workload runs (docs/tasks.md): indices sliced from a ball query (a view with the wider result's
strides), channels-last features seen as channels first, transposed indices, an empty group."""

import torch

from pointkit import ball_query, group_points


class Model(torch.nn.Module):
    def forward(self, features, points):
        idx, _ = ball_query(points, points[:, :16], 0.3, 16)
        channels_last = features[:, :6, :50].transpose(1, 2).contiguous().transpose(1, 2)
        some = (points[:, :27, 0] * 50).long().clamp(max=49).view(2, 9, 3)
        transposed = (points[:1, :35, 1] * 30).long().clamp(max=29).view(1, 5, 7).transpose(1, 2)
        empty = torch.zeros(2, 0, 4, dtype=torch.long, device=features.device)
        return (group_points(features, idx[..., :4]), group_points(channels_last, some),
                group_points(features[:1, :4, :30], transposed), group_points(features[:, :3, :10], empty))


def get_inputs():
    return [torch.randn(2, 8, 120), torch.rand(2, 120, 3)]


def get_init_inputs():
    return []
