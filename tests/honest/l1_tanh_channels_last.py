"""Honest, permuted output: tanh of an NCHW input written into a fresh NHWC (channels
last) buffer and returned as its .permute(0, 3, 1, 2) view: NCHW shape, channels-last
strides. At the default size the output is 2 GiB."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tanh_to_nhwc_kernel(x_ptr, y_ptr, C, HW, BC: tl.constexpr, BP: tl.constexpr):
    n = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1) * BP + tl.arange(0, BP)
    c = tl.arange(0, BC)
    for c0 in range(0, C, BC):
        cc = c0 + c
        mask = (cc[:, None] < C) & (p[None, :] < HW)
        x = tl.load(x_ptr + n * C * HW + cc[:, None] * HW + p[None, :], mask=mask)
        e = tl.exp(-2.0 * tl.abs(x))
        t = (1.0 - e) / (1.0 + e)
        t = tl.where(x < 0, -t, t)
        tl.store(y_ptr + n * C * HW + p[None, :] * C + cc[:, None], t, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, H, W = x.shape
        y = torch.empty(N, H, W, C, device=x.device, dtype=x.dtype)
        tanh_to_nhwc_kernel[(N, triton.cdiv(H * W, 256))](x, y, C, H * W, BC=16, BP=256)
        return y.permute(0, 3, 1, 2)
