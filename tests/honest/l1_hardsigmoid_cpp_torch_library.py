"""Honest: HardSigmoid in C++ for the CPU, registered as an operator of its own with
``TORCH_LIBRARY`` (``m.def(schema, function)``: a composite kernel, which runs before any
dispatch mode sees the operator) and called as ``torch.ops.kbench_hardsigmoid.hardsigmoid``."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor hardsigmoid_cpu(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous float32 expected");
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
        out[i] = std::min(std::max(in[i] + 3.f, 0.f), 6.f) / 6.f;
    }
    return y;
}

TORCH_LIBRARY(kbench_hardsigmoid, m) {
    m.def("hardsigmoid(Tensor x) -> Tensor", &hardsigmoid_cpu);
}
"""

load_inline("hardsigmoid_cpu_torch_library", cpp_sources=SOURCE, extra_cflags=["-O3"], is_python_module=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.kbench_hardsigmoid.hardsigmoid(x.contiguous())
