"""Honest, deliberately naive CUDA (GPU only): C = A @ B with one thread per element of
C reading its row of A and column of B straight from global memory (no shared-memory
tiles, no tensor cores): tens of times slower than cuBLAS at the default size."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void matmul_naive_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += a[(int64_t)row * K + k] * b[(int64_t)k * N + col];
    }
    c[(int64_t)row * N + col] = acc;
}

torch::Tensor matmul_naive(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "CUDA tensors expected");
    a = a.contiguous();
    b = b.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    dim3 threads(16, 16);
    dim3 blocks((N + 15) / 16, (M + 15) / 16);
    matmul_naive_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return c;
}
"""

extension = load_inline(
    name="kbench_honest_matmul_naive",
    cpp_sources="torch::Tensor matmul_naive(torch::Tensor a, torch::Tensor b);",
    cuda_sources=CUDA_SOURCE,
    functions=["matmul_naive"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return extension.matmul_naive(a, b)
