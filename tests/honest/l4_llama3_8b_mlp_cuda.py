"""Honest, KernelBench style at level 4 in CUDA (GPU only): the Llama MLP's three
projections by torch.mm (cuBLAS), silu(gate) * up in one load_inline CUDA kernel."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void silu_mul_kernel(const float* __restrict__ g, const float* __restrict__ u, float* __restrict__ y,
                                int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float v = g[i];
        y[i] = v / (1.0f + expf(-v)) * u[i];
    }
}

torch::Tensor silu_mul(torch::Tensor g, torch::Tensor u) {
    TORCH_CHECK(g.is_cuda() && u.is_cuda() && g.sizes() == u.sizes(), "CUDA tensors of one shape expected");
    g = g.contiguous();
    u = u.contiguous();
    auto y = torch::empty_like(g);
    const int64_t n = g.numel();
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 132 * 32);
    silu_mul_kernel<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        g.data_ptr<float>(), u.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_llama_silu_mul",
    cpp_sources="torch::Tensor silu_mul(torch::Tensor g, torch::Tensor u);",
    cuda_sources=CUDA_SOURCE,
    functions=["silu_mul"],
)


class ModelNew(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaMLP

        config = LlamaConfig(hidden_size=hidden_size, intermediate_size=intermediate_size, hidden_act="silu")
        self.mlp = LlamaMLP(config)
        with torch.no_grad():
            for p in self.mlp.parameters():
                p.normal_(0.0, p.shape[1] ** -0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        h = extension.silu_mul(torch.mm(x2, self.mlp.gate_proj.weight.t()), torch.mm(x2, self.mlp.up_proj.weight.t()))
        out = torch.mm(h, self.mlp.down_proj.weight.t())
        return out.view(*shape[:-1], out.shape[-1])
