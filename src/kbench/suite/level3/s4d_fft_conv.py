"""Stack of diagonal state-space (S4D-Real) layers: the SSM kernel built from its parameters, applied as a long convolution via FFT, then GELU, GLU mixing, residual, LayerNorm."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

KBENCH_LEVEL = 3
KBENCH_NAME = "S4D state-space layers (FFT convolution)"
KBENCH_SMALL = {"batch_size": 2, "seq_len": 64, "d_model": 16, "d_state": 8}
# float32 only: FFTs do not run in bfloat16.
KBENCH_DTYPES = ("float32",)

batch_size = 8
seq_len = 2048
d_model = 512
d_state = 64
num_layers = 4


class S4DLayer(nn.Module):
    def __init__(self, d_model: int, d_state: int):
        super().__init__()
        self.log_dt = nn.Parameter(torch.rand(d_model) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        a = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_model, 1)
        self.log_a = nn.Parameter(torch.log(0.5 * a) + 0.1 * torch.randn(d_model, d_state))
        self.c = nn.Parameter(torch.randn(d_model, d_state) * d_state ** -0.5)
        self.d = nn.Parameter(torch.randn(d_model))
        self.mix = nn.Linear(d_model, 2 * d_model)
        self.norm = nn.LayerNorm(d_model)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.normal_(0.0, 0.2)

    def kernel(self, length: int) -> torch.Tensor:
        """K[h, l] = sum_n C[h, n] B_bar[h, n] exp(dt_h A[h, n] l), zero-order hold, B = 1."""
        dt = torch.exp(self.log_dt)[:, None]
        a = -torch.exp(self.log_a)
        b_bar = torch.expm1(dt * a) / a
        steps = torch.arange(length, dtype=a.dtype, device=a.device)
        powers = torch.exp((dt * a)[:, :, None] * steps)  # (d_model, d_state, length)
        return torch.einsum("hn,hnl->hl", self.c * b_bar, powers)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        length = u.shape[1]
        k = self.kernel(length)
        x = u.transpose(1, 2)  # (b, h, length)
        y = torch.fft.irfft(torch.fft.rfft(x, n=2 * length) * torch.fft.rfft(k, n=2 * length), n=2 * length)
        y = y[..., :length] + self.d[:, None] * x
        y = F.glu(self.mix(F.gelu(y).transpose(1, 2)), dim=-1)
        return self.norm(u + y)


class Model(nn.Module):
    def __init__(self, d_model: int, d_state: int, num_layers: int):
        super().__init__()
        self.layers = nn.Sequential(*[S4DLayer(d_model, d_state) for _ in range(num_layers)])

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return self.layers(u)


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, d_state, num_layers]


def kbench_flops():
    n = batch_size * seq_len
    fft_len = 2 * seq_len
    ffts = 3 * batch_size * d_model * 2.5 * fft_len * math.log2(fft_len) + 6 * batch_size * d_model * (seq_len + 1)
    kernel = d_model * d_state * seq_len * 3
    mix = 2 * n * d_model * 2 * d_model + 20 * n * d_model
    return num_layers * (ffts + kernel + mix)


def kbench_bytes():
    params = num_layers * (3 * d_model * d_state + 2 * d_model * d_model + 6 * d_model)
    return 4 * (2 * batch_size * seq_len * d_model + params)
