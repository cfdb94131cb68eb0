"""Honest, fast, huge output, CUDA (GPU only): the ReLU with float4 loads and stores
and a grid-stride loop; at the default size 2 GiB in and 2 GiB out."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.0f); v.y = fmaxf(v.y, 0.0f); v.z = fmaxf(v.z, 0.0f); v.w = fmaxf(v.w, 0.0f);
        y[i] = v;
    }
}

__global__ void relu_tail_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_vec(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "a CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    // float4 only where both pointers are 16-byte aligned (an input may be an offset view)
    const bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr<float>()) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(y.data_ptr<float>()) % 16 == 0;
    const int64_t n4 = aligned ? n / 4 : 0;
    auto stream = at::cuda::getCurrentCUDAStream();
    if (n4 > 0) {
        const int blocks = (int)std::min<int64_t>((n4 + 255) / 256, 132 * 16);
        relu_vec4_kernel<<<blocks, 256, 0, stream>>>(
            reinterpret_cast<const float4*>(x.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()), n4);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (n4 * 4 < n) {
        const int64_t rest = n - n4 * 4;
        relu_tail_kernel<<<(int)((rest + 255) / 256), 256, 0, stream>>>(
            x.data_ptr<float>(), y.data_ptr<float>(), n4 * 4, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_relu_vec4",
    cpp_sources="torch::Tensor relu_vec(torch::Tensor x);",
    cuda_sources=CUDA_SOURCE,
    functions=["relu_vec"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return extension.relu_vec(x)
