"""Honest: the scaled Swish x * sigmoid(x) * w in C++ for the CPU, run on blocks of rows by a
thread pool that forward opens and joins (``with ThreadPoolExecutor(...)``); the extension
releases the GIL, so the blocks run at once. The C++ calls happen in the pool's threads,
not in the thread that called forward."""

from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <cmath>

void swish_rows(torch::Tensor x, torch::Tensor w, torch::Tensor y, int64_t start, int64_t stop) {
    const int64_t cols = x.size(1);
    const float* in = x.data_ptr<float>();
    const float* weight = w.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = start; r < stop; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
            const float v = in[r * cols + c];
            out[r * cols + c] = v / (1.f + std::exp(-v)) * weight[c];
        }
    }
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("swish_rows", &swish_rows, pybind11::call_guard<pybind11::gil_scoped_release>());
}
"""

_ext = load_inline("swish_cpu_thread_pool", cpp_sources=SOURCE, extra_cflags=["-O3"])
WORKERS = 2


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight = self.weight.detach().contiguous()
        y = torch.empty_like(x)
        rows = x.shape[0]
        step = max(1, -(-rows // WORKERS))
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            jobs = [pool.submit(_ext.swish_rows, x, weight, y, start, min(start + step, rows))
                    for start in range(0, rows, step)]
            for job in jobs:
                job.result()
        return y
