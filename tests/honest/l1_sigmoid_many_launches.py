"""Honest, many launches: the sigmoid as 128 separate launches of a small Triton kernel,
one per contiguous chunk of the input (a loop of kernels in forward, as a model that
tiles on the host writes it)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNKS = 128


@triton.jit
def sigmoid_chunk_kernel(x_ptr, y_ptr, start, end, BLOCK: tl.constexpr):
    idx = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < end
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, 1.0 / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        chunk = triton.cdiv(n, CHUNKS)
        block = 1024
        for start in range(0, n, chunk):
            end = min(start + chunk, n)
            sigmoid_chunk_kernel[(triton.cdiv(end - start, block),)](x, y, start, end, BLOCK=block)
        return y
