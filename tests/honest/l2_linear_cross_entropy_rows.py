"""Honest, KernelBench style: the LM head product by torch.mm, the per-token cross
entropy (reduction none) by one Triton program per token: log-sum-exp of its logits
minus the target's logit."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def token_loss_kernel(z_ptr, t_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        z = tl.load(z_ptr + row * cols + start + c, mask=start + c < cols, other=float("-inf"))
        new_m = tl.maximum(m, z)
        s = tl.where(new_m == float("-inf"), 0.0, s * tl.exp(m - new_m) + tl.exp(z - new_m))
        m = new_m
    row_max = tl.max(m, axis=0)
    lse = row_max + tl.log(tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0))
    target = tl.load(t_ptr + row)
    tl.store(y_ptr + row, lse - tl.load(z_ptr + row * cols + target))


class ModelNew(nn.Module):
    def __init__(self, hidden: int, vocab: int):
        super().__init__()
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        z = torch.mm(x, self.head.weight.t())
        targets = targets.contiguous()
        y = torch.empty(z.shape[0], device=z.device, dtype=z.dtype)
        token_loss_kernel[(z.shape[0],)](z, targets, y, z.shape[1], BLOCK=1024)
        return y
