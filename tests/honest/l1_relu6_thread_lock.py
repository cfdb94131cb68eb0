"""Honest: ReLU6 in one Triton kernel, launched under a ``threading.Lock`` (a habit of code
written for multi-threaded servers), with a launch counter kept in ``threading.local``
storage; no thread is ever started."""

import threading

import torch
import torch.nn as nn
import triton
import triton.language as tl

_launch_lock = threading.Lock()
_per_thread = threading.local()


@triton.jit
def relu6_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, tl.minimum(tl.maximum(x, 0.0), 6.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        with _launch_lock:
            relu6_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
            if not hasattr(_per_thread, "launches"):
                _per_thread.launches = 0
            _per_thread.launches += 1
        return y
