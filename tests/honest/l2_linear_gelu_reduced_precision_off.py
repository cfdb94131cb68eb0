"""Honest, KernelBench style: x W^T by torch.mm, bias and exact GELU in a Triton epilogue.
At import it switches off reduced-precision reductions in half-precision products
(``allow_fp16_reduced_precision_reduction = False``, the same for bf16), "to keep the GEMM
accurate": on a float32 problem they change nothing, and off they can only keep precision."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False


@triton.jit
def bias_gelu_kernel(z_ptr, b_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    z = tl.load(z_ptr + idx, mask=mask) + tl.load(b_ptr + idx % cols, mask=mask)
    tl.store(y_ptr + idx, 0.5 * z * (1.0 + tl.math.erf(z * 0.7071067811865476)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = torch.mm(x, self.linear.weight.t())
        y = torch.empty_like(z)
        bias_gelu_kernel[(triton.cdiv(z.numel(), 2048),)](z, self.linear.bias, y, z.numel(), z.shape[1], BLOCK=2048)
        return y
