"""Honest: Tanh in C++ for the CPU, built under a name derived from a hash of its source (so an
edited source never loads a stale build, the cache key models write with ``hashlib``), its
build log kept out of the output by ``contextlib.redirect_stdout`` into a string buffer."""

import contextlib
import hashlib
import io

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor tanh_host(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
        out[i] = std::tanh(in[i]);
    }
    return y;
}
"""

_NAME = "tanh_host_" + hashlib.sha256(SOURCE.encode()).hexdigest()[:12]
_build_log = io.StringIO()
with contextlib.redirect_stdout(_build_log):
    _ext = load_inline(_NAME, cpp_sources=SOURCE, functions=["tanh_host"], extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.tanh_host(x.contiguous())
