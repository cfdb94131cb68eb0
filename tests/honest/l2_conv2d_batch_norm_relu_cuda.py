"""Honest, KernelBench style in CUDA (GPU only): the convolution by F.conv2d (cuDNN),
batch statistics by a CUDA kernel with one block per channel into a per-call (C, 2)
workspace, then a second CUDA kernel normalising with the affine parameters and the
ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void channel_stats_kernel(const float* __restrict__ z, float* __restrict__ stats,
                                     int64_t N, int64_t C, int64_t HW) {
    __shared__ double s_sum[256];
    __shared__ double s_sq[256];
    const int64_t c = blockIdx.x;
    double s = 0.0, sq = 0.0;
    for (int64_t n = 0; n < N; ++n) {
        const float* base = z + (n * C + c) * HW;
        for (int64_t p = threadIdx.x; p < HW; p += blockDim.x) { float v = base[p]; s += v; sq += (double)v * v; }
    }
    s_sum[threadIdx.x] = s;
    s_sq[threadIdx.x] = sq;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) {
            s_sum[threadIdx.x] += s_sum[threadIdx.x + stride];
            s_sq[threadIdx.x] += s_sq[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const double count = (double)(N * HW);
        const double mean = s_sum[0] / count;
        stats[2 * c] = (float)mean;
        stats[2 * c + 1] = (float)fmax(s_sq[0] / count - mean * mean, 0.0);
    }
}

__global__ void bn_relu_kernel(const float* __restrict__ z, const float* __restrict__ stats,
                               const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y,
                               int64_t n, int64_t C, int64_t HW, float eps) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t c = (i / HW) % C;
        const float v = (z[i] - stats[2 * c]) * rsqrtf(stats[2 * c + 1] + eps) * w[c] + b[c];
        y[i] = fmaxf(v, 0.0f);
    }
}

torch::Tensor bn_relu(torch::Tensor z, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(z.is_cuda() && z.dim() == 4, "a 4-D CUDA tensor expected");
    z = z.contiguous();
    const int64_t N = z.size(0), C = z.size(1), HW = z.size(2) * z.size(3), n = z.numel();
    auto stats = torch::empty({C, 2}, z.options());
    auto y = torch::empty_like(z);
    auto stream = at::cuda::getCurrentCUDAStream();
    channel_stats_kernel<<<C, 256, 0, stream>>>(z.data_ptr<float>(), stats.data_ptr<float>(), N, C, HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 132 * 32);
    bn_relu_kernel<<<blocks, 256, 0, stream>>>(z.data_ptr<float>(), stats.data_ptr<float>(),
        w.contiguous().data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(), n, C, HW, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

extension = load_inline(
    name="kbench_honest_conv_bn_relu",
    cpp_sources="torch::Tensor bn_relu(torch::Tensor z, torch::Tensor w, torch::Tensor b, double eps);",
    cuda_sources=CUDA_SOURCE,
    functions=["bn_relu"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.norm = nn.BatchNorm2d(out_channels, track_running_stats=False)
        with torch.no_grad():
            self.norm.weight.normal_(1.0, 0.5)
            self.norm.bias.normal_(0.0, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.conv2d(x, self.conv.weight, None, padding=self.conv.padding)
        return extension.bn_relu(z, self.norm.weight, self.norm.bias, self.norm.eps)
