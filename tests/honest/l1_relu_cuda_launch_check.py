"""Honest: ReLU in CUDA (load_inline) written with the checks careful model answers add:
``TORCH_CHECK`` on device and layout, ``AT_DISPATCH_FLOATING_TYPES``, the launch placed on
``at::cuda::getCurrentCUDAStream()`` and followed by ``C10_CUDA_KERNEL_LAUNCH_CHECK()``."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const scalar_t v = x[i];
        y[i] = v > scalar_t(0) ? v : scalar_t(0);
    }
}

torch::Tensor relu_checked(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    auto stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "relu_checked", [&] {
        relu_kernel<scalar_t><<<blocks, threads, 0, stream>>>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""
CPP_SOURCE = "torch::Tensor relu_checked(torch::Tensor x);"

_ext = load_inline("relu_cuda_launch_check", cpp_sources=CPP_SOURCE, cuda_sources=CUDA_SOURCE,
                   functions=["relu_checked"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_checked(x.contiguous())
