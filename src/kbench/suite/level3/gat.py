"""Graph attention network: two GAT layers (multi-head additive attention over neighbours given as a boolean adjacency mask, ELU), dense form."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "Graph attention network (dense mask)"
KBENCH_SMALL = {"num_nodes": 96, "in_features": 32, "head_dim": 8, "heads": 2, "num_classes": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.0051 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}

num_nodes = 6144
in_features = 512
heads = 8
head_dim = 64
num_classes = 64
mean_degree = 32


class GATLayer(nn.Module):
    def __init__(self, cin: int, heads: int, dim: int):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.proj = nn.Linear(cin, heads * dim, bias=False)
        nn.init.normal_(self.proj.weight, std=cin ** -0.5)
        self.att_src = nn.Parameter(torch.randn(heads, dim) * dim ** -0.5)
        self.att_dst = nn.Parameter(torch.randn(heads, dim) * dim ** -0.5)
        self.bias = nn.Parameter(torch.randn(heads * dim) * 0.1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        h = self.proj(x).view(n, self.heads, self.dim)
        src = (h * self.att_src).sum(-1)  # (n, heads)
        dst = (h * self.att_dst).sum(-1)
        scores = F.leaky_relu(dst.T[:, :, None] + src.T[:, None, :], 0.2)  # (heads, n_dst, n_src)
        scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.bmm(weights, h.transpose(0, 1))  # (heads, n, dim)
        return out.transpose(0, 1).reshape(n, self.heads * self.dim) + self.bias


class Model(nn.Module):
    def __init__(self, in_features: int, heads: int, head_dim: int, num_classes: int):
        super().__init__()
        self.layer1 = GATLayer(in_features, heads, head_dim)
        self.layer2 = GATLayer(heads * head_dim, 1, num_classes)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        # adj: boolean (num_nodes, num_nodes), adj[i, j] = j is a neighbour of i; self-loops included
        return self.layer2(F.elu(self.layer1(x, adj)), adj)


def get_inputs():
    x = torch.randn(num_nodes, in_features)
    edges = torch.rand(num_nodes, num_nodes) < mean_degree / (2 * num_nodes)
    adj = edges | edges.T | torch.eye(num_nodes, dtype=torch.bool)
    return [x, adj]


def get_init_inputs():
    return [in_features, heads, head_dim, num_classes]


def kbench_flops():
    n2 = num_nodes * num_nodes
    layer1 = 2 * num_nodes * in_features * heads * head_dim + heads * n2 * (10 + 2 * head_dim)
    layer2 = 2 * num_nodes * heads * head_dim * num_classes + n2 * (10 + 2 * num_classes)
    return layer1 + layer2 + 4 * num_nodes * heads * head_dim


def kbench_bytes():
    weights = in_features * heads * head_dim + 3 * heads * head_dim + heads * head_dim * num_classes + 3 * num_classes
    return 4 * (num_nodes * (in_features + num_classes) + weights) + num_nodes * num_nodes
