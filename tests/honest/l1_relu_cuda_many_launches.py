"""Honest, many launches, CUDA (GPU only): the ReLU as 512 launches of a small CUDA
kernel, each over one contiguous chunk of the input, all on the current stream."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_range_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t end) {
    for (int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < end;
         i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(x[i], 0.0f);
    }
}

void relu_range(torch::Tensor x, torch::Tensor y, int64_t start, int64_t end) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && y.is_contiguous(), "contiguous CUDA tensors expected");
    if (end <= start) return;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((end - start + threads - 1) / threads, 1024);
    relu_range_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), start, end);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

extension = load_inline(
    name="kbench_honest_relu_range",
    cpp_sources="void relu_range(torch::Tensor x, torch::Tensor y, int64_t start, int64_t end);",
    cuda_sources=CUDA_SOURCE,
    functions=["relu_range"],
)

LAUNCHES = 512


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        chunk = (n + LAUNCHES - 1) // LAUNCHES
        for start in range(0, n, chunk):
            extension.relu_range(x, y, start, min(start + chunk, n))
        return y
