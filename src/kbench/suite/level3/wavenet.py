"""WaveNet stack: dilated causal convolutions (dilation 1..512) with tanh-sigmoid gating, residual and skip 1x1 convolutions, ReLU output head."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "WaveNet"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 256, "residual_channels": 8, "gate_channels": 16, "skip_channels": 16, "num_layers": 4, "out_channels": 16}
KBENCH_DTYPES = ("float32", "bfloat16")
# In bfloat16 the reference itself is off from float64 by up to 0.013 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 4
seq_len = 16384
residual_channels = 64
gate_channels = 128
skip_channels = 128
num_layers = 10
out_channels = 256


class Model(nn.Module):
    def __init__(self, residual_channels, gate_channels, skip_channels, num_layers, out_channels):
        super().__init__()
        self.input = nn.Conv1d(1, residual_channels, 1)
        self.dilated = nn.ModuleList(
            nn.Conv1d(residual_channels, 2 * gate_channels, 2, dilation=2 ** i) for i in range(num_layers)
        )
        self.residual = nn.ModuleList(nn.Conv1d(gate_channels, residual_channels, 1) for _ in range(num_layers))
        self.skip = nn.ModuleList(nn.Conv1d(gate_channels, skip_channels, 1) for _ in range(num_layers))
        self.out1 = nn.Conv1d(skip_channels, skip_channels, 1)
        self.out2 = nn.Conv1d(skip_channels, out_channels, 1)
        with torch.no_grad():
            nn.init.normal_(self.input.weight, std=1.0)
            for conv in self.dilated:
                nn.init.normal_(conv.weight, std=(2 * residual_channels) ** -0.5 * 1.5)
            for conv in list(self.residual) + list(self.skip):
                nn.init.normal_(conv.weight, std=gate_channels ** -0.5)
            nn.init.kaiming_normal_(self.out1.weight, nonlinearity="relu")
            nn.init.normal_(self.out2.weight, std=skip_channels ** -0.5)
        self.skip_scale = 1.0 / math.sqrt(num_layers)

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        x = self.input(audio)
        skips = 0
        for i, (dilated, residual, skip) in enumerate(zip(self.dilated, self.residual, self.skip)):
            h = dilated(F.pad(x, (2 ** i, 0)))  # causal: left padding only
            filt, gate = h.chunk(2, dim=1)
            z = torch.tanh(filt) * torch.sigmoid(gate)
            x = (x + residual(z)) * math.sqrt(0.5)
            skips = skips + skip(z)
        out = F.relu(self.out1(F.relu(skips * self.skip_scale)))
        return self.out2(out)


def get_inputs():
    return [torch.randn(batch_size, 1, seq_len)]


def get_init_inputs():
    return [residual_channels, gate_channels, skip_channels, num_layers, out_channels]


def kbench_flops():
    layer = 2 * (2 * residual_channels * 2 * gate_channels + gate_channels * (residual_channels + skip_channels))
    layer += 30 * gate_channels + 3 * residual_channels + skip_channels
    head = 2 * skip_channels * (skip_channels + out_channels) + 3 * skip_channels
    return batch_size * seq_len * (2 * residual_channels + num_layers * layer + head)


def kbench_bytes():
    with torch.device("meta"):
        params = sum(p.numel() for p in Model(*get_init_inputs()).parameters())
    return 4 * (batch_size * seq_len * (1 + out_channels) + params)
