"""Honest: Sigmoid in C++ for the CPU with ATen's own ``at::parallel_for`` (PyTorch's intra-op
thread pool) inside ``AT_DISPATCH_FLOATING_TYPES``, the dispatch macro model answers wrap a
typed kernel in."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <cmath>

torch::Tensor sigmoid_parallel(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous(), "contiguous input expected");
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "sigmoid_parallel", [&] {
        const scalar_t* in = x.data_ptr<scalar_t>();
        scalar_t* out = y.data_ptr<scalar_t>();
        at::parallel_for(0, x.numel(), 4096, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                out[i] = scalar_t(1) / (scalar_t(1) + std::exp(-in[i]));
            }
        });
    });
    return y;
}
"""

_ext = load_inline("sigmoid_cpu_parallel_for", cpp_sources=SOURCE, functions=["sigmoid_parallel"],
                   extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sigmoid_parallel(x.contiguous())
