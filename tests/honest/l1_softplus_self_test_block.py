"""Honest: Softplus in one Triton kernel, and below it the self-test block the model wrote
to try its answer (run as a script only): it seeds the RNG, computes the reference's
operation to compare with, times with ``time.perf_counter`` and ends in ``sys.exit``. An
import never runs that block."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def softplus_kernel(x_ptr, y_ptr, n, beta, threshold, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    z = x * beta
    soft = tl.log(1.0 + tl.exp(tl.minimum(z, threshold))) / beta
    tl.store(y_ptr + idx, tl.where(z > threshold, x, soft), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, beta: float, threshold: float):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        softplus_kernel[(triton.cdiv(n, 1024),)](x, y, n, self.beta, self.threshold, BLOCK=1024)
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(64, 4096, device="cuda") * 4.0
    model = ModelNew(2.0, 10.0)
    expected = F.softplus(x, beta=2.0, threshold=10.0)
    start = time.perf_counter()
    got = model(x)
    error = (got - expected).abs().max().item()
    print(f"max error {error:.3g}, {1e3 * (time.perf_counter() - start):.2f} ms")
    sys.exit(0 if error < 1e-4 else 1)
