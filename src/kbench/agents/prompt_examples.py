"""The worked examples the built-in prompts show: a problem and a solution to it, per target.

Our own (written for kbench; not from any benchmark).
"""

from __future__ import annotations

_RELU_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return []
'''

_ROWSUM_PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-1)


def get_inputs():
    return [torch.randn(2048, 6000)]


def get_init_inputs():
    return []
'''

EXAMPLES: dict[str, list[tuple[str, str, str]]] = {
    "triton": [
        (
            "ReLU",
            _RELU_PROBLEM,
            '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu(src, dst, n, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    idx = start + tl.arange(0, BLOCK_SIZE)
    keep = idx < n
    v = tl.load(src + idx, mask=keep, other=0.0)
    tl.store(dst + idx, tl.where(v > 0, v, 0.0), mask=keep)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        src = x.contiguous()
        dst = torch.empty_like(src)
        n = src.numel()
        grid = (triton.cdiv(n, 2048),)
        _relu[grid](src, dst, n, BLOCK_SIZE=2048, num_warps=8)
        return dst
''',
        ),
        (
            "row sum",
            _ROWSUM_PROBLEM,
            '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_sum(src, dst, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = src + row * n_cols
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for col0 in range(0, n_cols, BLOCK_SIZE):
        cols = col0 + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(dst + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        src = x.contiguous()
        n_cols = src.shape[-1]
        rows = src.numel() // max(n_cols, 1)
        dst = torch.empty(src.shape[:-1], dtype=src.dtype, device=src.device)
        _row_sum[(rows,)](src, dst, n_cols, BLOCK_SIZE=1024)
        return dst
''',
        ),
    ],
    "cuda": [
        (
            "ReLU",
            _RELU_PROBLEM,
            '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_f32(const float* __restrict__ src, float* __restrict__ dst, int64_t n) {
    int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        float v = src[i];
        dst[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor relu(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    auto src = x.contiguous();
    auto dst = torch::empty_like(src);
    int64_t n = src.numel();
    if (n == 0) return dst;
    int threads = 256;
    int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65536);
    relu_f32<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        src.data_ptr<float>(), dst.data_ptr<float>(), n);
    return dst;
}
"""

_ext = load_inline(
    name="example_relu_f32",
    cpp_sources="torch::Tensor relu(torch::Tensor x);",
    cuda_sources=_SOURCE,
    functions=["relu"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu(x)
''',
        ),
        (
            "row sum",
            _ROWSUM_PROBLEM,
            '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int THREADS = 256;

__global__ void row_sum_f32(const float* __restrict__ src, float* __restrict__ dst, int64_t n_cols) {
    const float* row = src + (int64_t)blockIdx.x * n_cols;
    float acc = 0.0f;
    for (int64_t c = threadIdx.x; c < n_cols; c += THREADS) acc += row[c];
    __shared__ float partial[THREADS];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) dst[blockIdx.x] = partial[0];
}

torch::Tensor row_sum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    auto src = x.contiguous();
    int64_t n_cols = src.size(-1);
    auto sizes = src.sizes().vec();
    sizes.pop_back();
    auto dst = torch::empty(sizes, src.options());
    int64_t rows = dst.numel();
    if (rows == 0) return dst;
    row_sum_f32<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        src.data_ptr<float>(), dst.data_ptr<float>(), n_cols);
    return dst;
}
"""

_ext = load_inline(
    name="example_row_sum_f32",
    cpp_sources="torch::Tensor row_sum(torch::Tensor x);",
    cuda_sources=_SOURCE,
    functions=["row_sum"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.row_sum(x)
''',
        ),
    ],
}
