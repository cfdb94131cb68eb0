"""Honest, one-element output, CUDA (GPU only): one block per row computes its
log-sum-exp minus the target logit and atomically adds loss / rows into a
zero-initialised 0-dimensional output."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void cross_entropy_kernel(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                                     float* __restrict__ out, int64_t rows, int64_t cols) {
    __shared__ float shared[256];
    const float* xr = logits + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    shared[threadIdx.x] = m;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + stride]);
        __syncthreads();
    }
    const float row_max = shared[0];
    __syncthreads();
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - row_max);
    shared[threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const float loss = row_max + logf(shared[0]) - xr[targets[blockIdx.x]];
        atomicAdd(out, loss / (float)rows);
    }
}

torch::Tensor cross_entropy_mean(torch::Tensor logits, torch::Tensor targets) {
    TORCH_CHECK(logits.is_cuda() && targets.is_cuda(), "CUDA tensors expected");
    logits = logits.contiguous();
    targets = targets.contiguous();
    auto out = torch::zeros(std::vector<int64_t>{}, logits.options());
    const int64_t rows = logits.size(0), cols = logits.size(1);
    cross_entropy_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        logits.data_ptr<float>(), targets.data_ptr<int64_t>(), out.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

extension = load_inline(
    name="kbench_honest_cross_entropy_atomic",
    cpp_sources="torch::Tensor cross_entropy_mean(torch::Tensor logits, torch::Tensor targets);",
    cuda_sources=CUDA_SOURCE,
    functions=["cross_entropy_mean"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return extension.cross_entropy_mean(logits, targets)
