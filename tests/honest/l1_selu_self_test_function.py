"""Honest: SELU in one Triton kernel, and the self-test the model wrote to try it as a
top-level function that only the ``if __name__ == "__main__":`` block calls: it seeds,
compares with ``torch.selu`` and ends in ``sys.exit``. An import never runs it."""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

ALPHA = 1.6732632423543772
SCALE = 1.0507009873554805


@triton.jit
def selu_kernel(x_ptr, y_ptr, n, alpha, scale, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    y = tl.where(x > 0.0, x, alpha * (tl.exp(tl.minimum(x, 0.0)) - 1.0))
    tl.store(y_ptr + idx, scale * y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        selu_kernel[(triton.cdiv(n, 1024),)](x, y, n, ALPHA, SCALE, BLOCK=1024)
        return y


def _max_error(model: nn.Module, x: torch.Tensor) -> float:
    return (model(x) - torch.selu(x)).abs().max().item()


def _self_test() -> None:
    torch.manual_seed(0)
    x = torch.randn(64, 4096, device="cuda") * 3.0
    error = _max_error(ModelNew(), x)
    print(f"max error {error:.3g}")
    sys.exit(0 if error < 1e-5 else 1)


if __name__ == "__main__":
    _self_test()
