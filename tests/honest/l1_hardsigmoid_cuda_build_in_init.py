"""Honest, CUDA (GPU only), the extension compiled lazily: nothing is built when the file
is imported; the first ModelNew.__init__ calls load_inline and keeps the module for later
models (the judge builds one model per size). The hardsigmoid with a grid-stride loop.
Its twin l1_hardsigmoid_cuda_build_at_import.py builds the same source at import."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void hardsigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fminf(fmaxf(x[i] + 3.0f, 0.0f), 6.0f) / 6.0f;
    }
}

torch::Tensor hardsigmoid(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "a float32 CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 132 * 32);
    hardsigmoid_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_BUILT: dict[str, object] = {}


def _extension():
    """Compiled on first use (in __init__), once per process."""
    if "hardsigmoid" not in _BUILT:
        _BUILT["hardsigmoid"] = load_inline(
            name="kbench_honest_hardsigmoid_lazy",
            cpp_sources="torch::Tensor hardsigmoid(torch::Tensor x);",
            cuda_sources=CUDA_SOURCE,
            functions=["hardsigmoid"],
        )
    return _BUILT["hardsigmoid"]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = _extension()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.hardsigmoid(x)
