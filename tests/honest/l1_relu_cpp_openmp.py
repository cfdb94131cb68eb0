"""Honest: ReLU in C++ for the CPU parallelised with OpenMP (``#pragma omp parallel for``,
built with ``-fopenmp``), as model answers spread a host loop over cores: the extension's own
native threads, started and joined inside the call."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

torch::Tensor relu_omp(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    #pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        out[i] = in[i] > 0.f ? in[i] : 0.f;
    }
    return y;
}
"""

_ext = load_inline("relu_cpu_openmp", cpp_sources=SOURCE, functions=["relu_omp"],
                   extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_omp(x.contiguous())
