"""Honest, kernels only (GPU only), the launch placed on torch.cuda.current_stream()
explicitly: forward enters a stream context of the stream that is already current (code
written to be explicit about where its work goes) and launches its Triton kernel there;
no other stream is made or used. softsign(x) = x / (1 + |x|)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softsign_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, x / (1.0 + tl.abs(x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        stream = torch.cuda.current_stream(x.device)
        with torch.cuda.stream(stream):
            y = torch.empty_like(x)
            n = x.numel()
            softsign_kernel[(triton.cdiv(n, 4096),)](x, y, n, BLOCK=4096)
        return y
