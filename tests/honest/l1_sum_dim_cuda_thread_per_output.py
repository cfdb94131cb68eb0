"""Honest CUDA (GPU only): the sum over dimension 1 of (B, R, D) with one thread per
output element looping over R (reads coalesced across D), fp32 accumulation."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void sum_dim1_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t B, int64_t R, int64_t D) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= B * D) return;
    int64_t b = i / D, d = i % D;
    const float* base = x + b * R * D + d;
    float acc = 0.0f;
    for (int64_t r = 0; r < R; ++r) acc += base[r * D];
    y[i] = acc;
}

torch::Tensor sum_dim1(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 3, "a 3-D CUDA tensor expected");
    x = x.contiguous();
    const int64_t B = x.size(0), R = x.size(1), D = x.size(2);
    auto y = torch::empty({B, D}, x.options());
    const int threads = 256;
    const int64_t blocks = (B * D + threads - 1) / threads;
    sum_dim1_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), B, R, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_sum_dim1",
    cpp_sources="torch::Tensor sum_dim1(torch::Tensor x);",
    cuda_sources=CUDA_SOURCE,
    functions=["sum_dim1"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return extension.sum_dim1(x)
