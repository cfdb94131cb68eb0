"""Honest, CUDA (GPU only), with the fallback models often add for a CPU tensor: a module
that still works off the GPU, through PyTorch there. On a GPU the fallback never runs; the
kernel computes the tanh-approximated GELU, one thread per element."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void gelu_tanh_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        const float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.0f + tanhf(inner));
    }
}

torch::Tensor gelu_tanh(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "a float32 CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n > 0) {
        gelu_tanh_kernel<<<(unsigned)((n + 255) / 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
            x.data_ptr<float>(), y.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

_extension = None


def _kernels():
    global _extension
    if _extension is None:
        _extension = load_inline(
            name="kbench_honest_gelu_tanh_fallback",
            cpp_sources="torch::Tensor gelu_tanh(torch::Tensor x);",
            cuda_sources=CUDA_SOURCE,
            functions=["gelu_tanh"],
        )
    return _extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        if torch.cuda.is_available():
            _kernels()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda or x.dtype != torch.float32:
            return F.gelu(x, approximate="tanh")  # off the GPU, or a dtype the kernel does not take
        return _kernels().gelu_tanh(x)
