"""Honest, KernelBench style in CUDA (GPU only): the product by torch.mm (cuBLAS), the
bias and the ReLU in one load_inline CUDA kernel writing a fresh output."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_relu_kernel(const float* __restrict__ z, const float* __restrict__ b, float* __restrict__ y,
                                 int64_t n, int64_t cols) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        y[i] = fmaxf(z[i] + b[i % cols], 0.0f);
    }
}

torch::Tensor bias_relu(torch::Tensor z, torch::Tensor b) {
    TORCH_CHECK(z.is_cuda() && b.is_cuda(), "CUDA tensors expected");
    z = z.contiguous();
    auto y = torch::empty_like(z);
    const int64_t n = z.numel();
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 132 * 32);
    bias_relu_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        z.data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(), n, z.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_gemm_bias_relu",
    cpp_sources="torch::Tensor bias_relu(torch::Tensor z, torch::Tensor b);",
    cuda_sources=CUDA_SOURCE,
    functions=["bias_relu"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return extension.bias_relu(torch.mm(x, self.linear.weight.t()), self.bias)
