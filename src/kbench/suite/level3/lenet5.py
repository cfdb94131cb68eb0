"""LeNet-5 style CNN on 32x32 greyscale images: two conv/ReLU/max-pool stages and three fully connected layers."""

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "LeNet-5"
KBENCH_SMALL = {"batch_size": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.013 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
# bf16 on the H200 (audit 2026-11-30) the reference used 0.54 of atol 0.04, rtol 0.04
# against float64: widened to about 2.5x its error, as on the CPU.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.055, "rtol": 0.055}}

batch_size = 32768
num_classes = 10


class Model(nn.Module):
    def __init__(self, num_classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)
        for layer in (self.conv1, self.conv2, self.fc1, self.fc2):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def get_inputs():
    return [torch.randn(batch_size, 1, 32, 32)]


def get_init_inputs():
    return [num_classes]


def kbench_flops():
    conv = 2 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 150)
    fc = 2 * (400 * 120 + 120 * 84 + 84 * num_classes)
    elementwise = 2 * 6 * 28 * 28 + 2 * 16 * 10 * 10 + 300
    return batch_size * (conv + fc + elementwise)


def kbench_bytes():
    weights = 6 * 26 + 16 * 151 + 400 * 120 + 120 + 120 * 84 + 84 + 84 * num_classes + num_classes
    return 4 * (batch_size * (32 * 32 + num_classes) + weights)
