"""Deep MLP classifier: eight Kaiming-initialised linear layers with ReLU between them."""

import itertools
import math

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "Deep MLP (8 layers, ReLU)"
KBENCH_SMALL = {"batch_size": 8, "in_features": 64, "hidden": 96, "num_classes": 10}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.45 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 5632}}
# In bfloat16 the reference itself is off from float64 by up to 0.02 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05, "rtol": 0.05}}

batch_size = 1024
in_features = 4096
hidden = 4096
num_layers = 8
num_classes = 1000


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_layers: int, num_classes: int):
        super().__init__()
        sizes = [in_features] + [hidden] * (num_layers - 1) + [num_classes]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        # Kaiming init keeps the activations' scale through the ReLUs (PyTorch's
        # default would shrink them by about 0.4 per layer).
        for layer in self.layers[:-1]:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
        nn.init.normal_(self.layers[-1].weight, std=1.0 / math.sqrt(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden, num_layers, num_classes]


def _sizes():
    sizes = [in_features] + [hidden] * (num_layers - 1) + [num_classes]
    return list(itertools.pairwise(sizes))


def kbench_flops():
    return sum(batch_size * (2 * a * b + b) for a, b in _sizes()) + batch_size * hidden * (num_layers - 1)


def kbench_bytes():
    weights = sum(a * b + b for a, b in _sizes())
    return 4 * (batch_size * in_features + weights + batch_size * num_classes)
