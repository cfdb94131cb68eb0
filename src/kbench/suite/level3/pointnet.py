"""PointNet classifier: input transform net (T-Net), shared per-point MLPs as 1x1 convs with BN (batch statistics over all points), max pool over points, MLP head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "PointNet with input transform"
KBENCH_SMALL = {"batch_size": 4, "num_points": 64, "width": 8, "num_classes": 10}
# float32 only: in bfloat16 a deep point-wise MLP and max-pool put errors of up to 0.07 (1 + |y|) in the reference itself.
KBENCH_DTYPES = ("float32",)

batch_size = 32
num_points = 4096
width = 64  # widths 64-128-1024 in multiples of 64
num_classes = 40


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


class SharedMLP(nn.Module):
    """Per-point MLP (1x1 convs), BN and ReLU, then max over points and a per-cloud MLP.

    The per-cloud MLP has no batch norm: statistics over a handful of clouds
    would make the output hinge on rounding."""

    def __init__(self, cin: int, widths, head):
        super().__init__()
        self.convs = nn.ModuleList()
        self.bns = nn.ModuleList()
        for w in widths:
            self.convs.append(nn.Conv1d(cin, w, 1))
            self.bns.append(random_norm(nn.BatchNorm1d(w)))
            cin = w
        self.fcs = nn.ModuleList()
        for w in head[:-1]:
            self.fcs.append(nn.Linear(cin, w))
            nn.init.kaiming_normal_(self.fcs[-1].weight, nonlinearity="relu")
            cin = w
        self.out = nn.Linear(cin, head[-1])
        nn.init.normal_(self.out.weight, std=cin ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for conv, bn in zip(self.convs, self.bns):
            x = F.relu(bn(conv(x)))
        x = x.amax(dim=2)
        for fc in self.fcs:
            x = F.relu(fc(x))
        return self.out(x)


class Model(nn.Module):
    def __init__(self, width: int, num_classes: int):
        super().__init__()
        self.tnet = SharedMLP(3, [width, 2 * width, 16 * width], [8 * width, 4 * width, 9])
        with torch.no_grad():
            self.tnet.out.weight.mul_(0.1)
        self.features = SharedMLP(3, [width, 2 * width, 16 * width], [8 * width, 4 * width, num_classes])

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        # points: (batch, 3, num_points)
        transform = self.tnet(points).view(-1, 3, 3) + torch.eye(3, dtype=points.dtype, device=points.device)
        return self.features(torch.bmm(transform, points))


def get_inputs():
    return [torch.randn(batch_size, 3, num_points)]


def get_init_inputs():
    return [width, num_classes]


def _shared_flops(out):
    per_point = 2 * (3 * width + width * 2 * width + 2 * width * 16 * width) + 10 * 19 * width
    head = 2 * (16 * width * 8 * width + 8 * width * 4 * width + 4 * width * out)
    return num_points * per_point + head


def kbench_flops():
    return batch_size * (_shared_flops(9) + _shared_flops(num_classes) + 2 * 9 * num_points)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * (3 * num_points + num_classes) + params)
