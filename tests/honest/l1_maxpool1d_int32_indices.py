"""Honest, kernels only, two kernels with an integer intermediate (the way max pooling
with indices is often written): the first finds, for every output window, the position of
its maximum along the row and stores it as int32 in a per-call workspace; the second
gathers the values at those positions into the output. Padding is -inf, and every window
holds at least one real element (padding < kernel size)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def window_argmax_kernel(x_ptr, idx_ptr, n_out, L, OL, stride, padding,
                         KSIZE: tl.constexpr, BLOCK: tl.constexpr):
    out = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = out < n_out
    row = out // OL
    start = (out % OL) * stride - padding
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    best_at = tl.maximum(start, 0).to(tl.int32)  # a real element of the window: its first
    for j in tl.static_range(KSIZE):
        pos = start + j
        inside = mask & (pos >= 0) & (pos < L)
        v = tl.load(x_ptr + row * L + pos, mask=inside, other=float("-inf")).to(tl.float32)
        take = inside & ((v > best) | (v != v))  # a NaN wins and stays, as in PyTorch
        best = tl.where(take, v, best)
        best_at = tl.where(take, pos.to(tl.int32), best_at)
    tl.store(idx_ptr + out, best_at, mask=mask)


@triton.jit
def gather_rows_kernel(x_ptr, idx_ptr, y_ptr, n_out, L, OL, BLOCK: tl.constexpr):
    out = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = out < n_out
    row = out // OL
    at = tl.load(idx_ptr + out, mask=mask, other=0)
    tl.store(y_ptr + out, tl.load(x_ptr + row * L + at, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, C, L = x.shape
        OL = (L + 2 * self.padding - self.kernel_size) // self.stride + 1
        y = torch.empty(B, C, OL, device=x.device, dtype=x.dtype)
        positions = torch.empty(B, C, OL, device=x.device, dtype=torch.int32)
        n_out = y.numel()
        grid = (triton.cdiv(n_out, 1024),)
        window_argmax_kernel[grid](x, positions, n_out, L, OL, self.stride, self.padding,
                                   KSIZE=self.kernel_size, BLOCK=1024)
        gather_rows_kernel[grid](x, positions, y, n_out, L, OL, BLOCK=1024)
        return y
