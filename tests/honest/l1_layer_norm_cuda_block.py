"""Honest CUDA (GPU only): LayerNorm with one block of 256 threads per row, Welford-free
two-pass statistics reduced in shared memory, then the affine normalisation."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ float block_sum(float v, float* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    float total = shared[0];
    __syncthreads();
    return total;
}

__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                  float* __restrict__ y, int64_t cols, float eps) {
    __shared__ float shared[256];
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const float mean = block_sum(s, shared) / cols;
    float v = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) { float d = xr[c] - mean; v += d * d; }
    const float rstd = rsqrtf(block_sum(v, shared) / cols + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

torch::Tensor layer_norm_rows(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda(), "a CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    layer_norm_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.contiguous().data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(),
        cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_layer_norm_block",
    cpp_sources="torch::Tensor layer_norm_rows(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);",
    cuda_sources=CUDA_SOURCE,
    functions=["layer_norm_rows"],
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(torch.randn(hidden))
            self.norm.bias.copy_(torch.randn(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return extension.layer_norm_rows(x, self.norm.weight, self.norm.bias, self.norm.eps)
