"""Honest, a CUDA graph (GPU only): on the first call for a shape, the Triton GELU is
compiled, then captured in a CUDA graph that reads a static input buffer and writes a
static output buffer; every call copies its input into the static buffer, replays the
graph and returns a fresh copy of the static output (never the kept buffer itself)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    x = tl.load(x_ptr + idx, mask=mask)
    tl.store(y_ptr + idx, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


def _launch(x: torch.Tensor, y: torch.Tensor) -> None:
    gelu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._graph = None
        self._key = None

    def _capture(self, x: torch.Tensor) -> None:
        self._static_in = torch.empty_like(x, memory_format=torch.contiguous_format)
        self._static_out = torch.empty_like(self._static_in)
        _launch(self._static_in, self._static_out)  # compile outside the capture
        torch.cuda.synchronize(x.device)
        self._graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self._graph):
            _launch(self._static_in, self._static_out)
        self._key = (tuple(x.shape), x.dtype, x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._graph is None or self._key != (tuple(x.shape), x.dtype, x.device):
            self._capture(x)
        self._static_in.copy_(x)
        self._graph.replay()
        return self._static_out.clone()
