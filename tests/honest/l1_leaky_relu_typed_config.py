"""Honest: LeakyReLU in one Triton kernel written with the typing models add: ``from
__future__ import annotations``, ``typing.Final`` constants, a ``TYPE_CHECKING`` import, a frozen
dataclass for the launch configuration and ``__all__``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import torch
import torch.nn as nn
import triton
import triton.language as tl

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["ModelNew"]

DEFAULT_BLOCK: Final[int] = 1024


@dataclass(frozen=True)
class LaunchConfig:
    block: int = DEFAULT_BLOCK
    num_warps: int = 4


@triton.jit
def leaky_relu_kernel(x_ptr, y_ptr, n, slope, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, tl.where(x > 0, x, x * slope), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float) -> None:
        super().__init__()
        self.negative_slope: float = float(negative_slope)
        self.config: LaunchConfig = LaunchConfig()

    def forward(self, x: Tensor) -> Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        leaky_relu_kernel[(triton.cdiv(n, self.config.block),)](x, y, n, self.negative_slope, BLOCK=self.config.block,
                                                                 num_warps=self.config.num_warps)
        return y
