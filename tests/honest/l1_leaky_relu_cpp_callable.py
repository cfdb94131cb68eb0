"""Honest: LeakyReLU in C++ for the CPU as a callable object: a pybind11 class holding the
slope, with ``__call__`` bound to its ``operator()``, built once in ``__init__`` and called
as ``self.op(x)`` in forward."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

struct LeakyRelu {
    float slope;
    explicit LeakyRelu(float s) : slope(s) {}
    torch::Tensor operator()(torch::Tensor x) const {
        TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
        auto y = torch::empty_like(x);
        const float* in = x.data_ptr<float>();
        float* out = y.data_ptr<float>();
        const int64_t n = x.numel();
        for (int64_t i = 0; i < n; ++i) {
            out[i] = in[i] > 0.f ? in[i] : in[i] * slope;
        }
        return y;
    }
};

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    pybind11::class_<LeakyRelu>(m, "LeakyRelu")
        .def(pybind11::init<float>())
        .def("__call__", &LeakyRelu::operator());
}
"""

_ext = load_inline("leaky_relu_cpu_callable", cpp_sources=SOURCE, extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.op = _ext.LeakyRelu(negative_slope)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x.contiguous())
