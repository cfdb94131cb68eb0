"""Honest, KernelBench style in CUDA (GPU only), two extensions built at once in a thread
pool entered by ``with`` (its threads are joined where the block ends): the product by
torch.mm (cuBLAS), then the bias in one kernel and the ReLU in place in another."""

from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

HEADERS = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
"""

BIAS_SOURCE = HEADERS + r"""
__global__ void add_bias_kernel(const float* __restrict__ z, const float* __restrict__ b, float* __restrict__ y,
                                int64_t n, int64_t cols) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = z[i] + b[i % cols];
}

torch::Tensor add_bias(torch::Tensor z, torch::Tensor b) {
    TORCH_CHECK(z.is_cuda() && b.is_cuda() && z.dim() == 2, "a 2-D CUDA tensor and a CUDA bias expected");
    z = z.contiguous();
    auto y = torch::empty_like(z);
    const int64_t n = z.numel();
    add_bias_kernel<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        z.data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(), n, z.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

RELU_SOURCE = HEADERS + r"""
__global__ void relu_inplace_kernel(float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(y[i], 0.0f);
}

torch::Tensor relu_inplace(torch::Tensor y) {
    TORCH_CHECK(y.is_cuda() && y.is_contiguous(), "a contiguous CUDA tensor expected");
    const int64_t n = y.numel();
    relu_inplace_kernel<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""


def _build(name: str, declaration: str, source: str, function: str):
    return load_inline(name=name, cpp_sources=declaration, cuda_sources=source, functions=[function])


with ThreadPoolExecutor(max_workers=2) as pool:
    bias_job = pool.submit(_build, "kbench_honest_parallel_bias", "torch::Tensor add_bias(torch::Tensor z, "
                           "torch::Tensor b);", BIAS_SOURCE, "add_bias")
    relu_job = pool.submit(_build, "kbench_honest_parallel_relu", "torch::Tensor relu_inplace(torch::Tensor y);",
                           RELU_SOURCE, "relu_inplace")
    bias_extension, relu_extension = bias_job.result(), relu_job.result()


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_extension.relu_inplace(bias_extension.add_bias(torch.mm(x, self.linear.weight.t()), self.bias))
