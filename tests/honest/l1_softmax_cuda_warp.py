"""Honest CUDA (GPU only): row softmax with one warp per row (shuffles for the max and
the sum, three passes over the row), eight rows per block."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols) {
    const int lane = threadIdx.x % 32;
    const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float m = -INFINITY;
    for (int64_t c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, off));
    float s = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) s += expf(xr[c] - m);
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
    const float inv = 1.0f / s;
    for (int64_t c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) * inv;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2, "a 2-D CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t rows = x.size(0), cols = x.size(1);
    const int warps = 8;
    const int64_t blocks = (rows + warps - 1) / warps;
    softmax_warp_kernel<<<blocks, warps * 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_softmax_warp",
    cpp_sources="torch::Tensor softmax_rows(torch::Tensor x);",
    cuda_sources=CUDA_SOURCE,
    functions=["softmax_rows"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return extension.softmax_rows(x)
