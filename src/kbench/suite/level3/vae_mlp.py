"""MLP variational autoencoder: encoder to (mu, logvar), reparameterisation with the noise passed in, decoder to logits."""

import torch
import torch.nn as nn

KBENCH_LEVEL = 3
KBENCH_NAME = "MLP variational autoencoder"
KBENCH_SMALL = {"batch_size": 16, "in_features": 64, "hidden1": 48, "hidden2": 32, "latent": 8}
KBENCH_DTYPES = ("float32", "bfloat16")
# bf16 at the fp32 size ran 0.49 ms eager on the H200 (audit 2026-11-30), under the
# audit's 1 ms floor; this size is scaled from that time to about 2.5 ms.
KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 172032}}
# In bfloat16 the reference itself is off from float64 by up to 0.012 (1 + |y|)
# (CPU, small and default size): the default 1e-2 is too tight.
KBENCH_TOLERANCE = {"bfloat16": {"atol": 0.04, "rtol": 0.04}}

batch_size = 32768
in_features = 784
hidden1 = 1024
hidden2 = 512
latent = 64


class Model(nn.Module):
    def __init__(self, in_features: int, hidden1: int, hidden2: int, latent: int):
        super().__init__()
        self.enc1 = nn.Linear(in_features, hidden1)
        self.enc2 = nn.Linear(hidden1, hidden2)
        self.mu = nn.Linear(hidden2, latent)
        self.logvar = nn.Linear(hidden2, latent)
        self.dec1 = nn.Linear(latent, hidden2)
        self.dec2 = nn.Linear(hidden2, hidden1)
        self.out = nn.Linear(hidden1, in_features)
        for layer in (self.enc1, self.enc2, self.dec1, self.dec2):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")

    def forward(self, x: torch.Tensor, eps: torch.Tensor):
        h = torch.relu(self.enc2(torch.relu(self.enc1(x))))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.exp(0.5 * logvar) * eps
        d = torch.relu(self.dec2(torch.relu(self.dec1(z))))
        return self.out(d), mu, logvar


def get_inputs():
    x = torch.rand(batch_size, in_features)  # pixel intensities
    eps = torch.randn(batch_size, latent)
    return [x, eps]


def get_init_inputs():
    return [in_features, hidden1, hidden2, latent]


def _layers():
    return [
        (in_features, hidden1), (hidden1, hidden2), (hidden2, latent), (hidden2, latent),
        (latent, hidden2), (hidden2, hidden1), (hidden1, in_features),
    ]


def kbench_flops():
    return sum(2 * batch_size * a * b for a, b in _layers()) + batch_size * (6 * hidden1 + 6 * hidden2 + 5 * latent)


def kbench_bytes():
    weights = sum(a * b + b for a, b in _layers())
    return 4 * (batch_size * (2 * in_features + 3 * latent) + weights)
