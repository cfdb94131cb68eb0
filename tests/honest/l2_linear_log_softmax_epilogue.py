"""Honest, KernelBench style: the product by torch.mm, then one Triton program per row
adds the bias and computes the log-softmax (online max and sum, then a second pass
writing x - max - log(sum))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_log_softmax_kernel(z_ptr, b_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        mask = start + c < cols
        z = tl.load(z_ptr + row * cols + start + c, mask=mask, other=0.0)
        z += tl.load(b_ptr + start + c, mask=mask, other=0.0)
        z = tl.where(mask, z, float("-inf"))
        new_m = tl.maximum(m, z)
        s = tl.where(new_m == float("-inf"), 0.0, s * tl.exp(m - new_m) + tl.exp(z - new_m))
        m = new_m
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0))
    for start in range(0, cols, BLOCK):
        mask = start + c < cols
        z = tl.load(z_ptr + row * cols + start + c, mask=mask) + tl.load(b_ptr + start + c, mask=mask)
        tl.store(y_ptr + row * cols + start + c, z - lse, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, vocab: int):
        super().__init__()
        self.linear = nn.Linear(in_features, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.mm(x, self.linear.weight.t())
        y = torch.empty_like(z)
        bias_log_softmax_kernel[(z.shape[0],)](z, self.linear.bias, y, z.shape[1], BLOCK=1024)
        return y
