"""Honest, one-element output: cross entropy with one program per row (online
log-sum-exp, minus the target's logit) into a per-call workspace, then one program
takes the mean into a 0-dimensional output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_loss_kernel(logits_ptr, targets_ptr, loss_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, cols, BLOCK):
        x = tl.load(logits_ptr + row * cols + start + c, mask=start + c < cols, other=float("-inf"))
        new_m = tl.maximum(m, x)
        s = tl.where(new_m == float("-inf"), 0.0, s * tl.exp(m - new_m) + tl.exp(x - new_m))
        m = new_m
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    target = tl.load(targets_ptr + row)
    picked = tl.load(logits_ptr + row * cols + target)
    tl.store(loss_ptr + row, row_max + tl.log(total) - picked)


@triton.jit
def mean_kernel(loss_ptr, out_ptr, rows, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, rows, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(loss_ptr + idx, mask=idx < rows, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits, targets = logits.contiguous(), targets.contiguous()
        rows, cols = logits.shape
        losses = torch.empty(rows, device=logits.device, dtype=torch.float32)
        out = torch.empty((), device=logits.device, dtype=logits.dtype)
        row_loss_kernel[(rows,)](logits, targets, losses, cols, BLOCK=1024)
        mean_kernel[(1,)](losses, out, rows, BLOCK=1024)
        return out
