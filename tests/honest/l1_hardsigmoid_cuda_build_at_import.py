"""Honest, CUDA (GPU only), the extension compiled when the file is imported (the judge's
build step then does the compiling, ahead of the device's turn): the hardsigmoid with a
grid-stride loop, the same source as l1_hardsigmoid_cuda_build_in_init.py, which builds it
in ModelNew.__init__ instead."""

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

extension = load_inline(
    name="kbench_honest_hardsigmoid_import",
    cpp_sources="torch::Tensor hardsigmoid(torch::Tensor x);",
    cuda_sources=CUDA_SOURCE,
    functions=["hardsigmoid"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return extension.hardsigmoid(x)
