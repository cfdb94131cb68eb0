"""Honest, KernelBench style replayed from a CUDA graph (GPU only): torch.mm (cuBLAS)
and a Triton bias+GELU epilogue, captured into one CUDA graph on the first call for a
shape, with static input and output buffers; every call copies its input in, replays
and returns a fresh copy of the static output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


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
        self._graph = None
        self._key = None

    def _body(self) -> None:
        z = torch.mm(self._static_in, self.linear.weight.t())
        bias_gelu_kernel[(triton.cdiv(z.numel(), 2048),)](z, self.linear.bias, self._static_out, z.numel(), z.shape[1],
                                                          BLOCK=2048)

    def _capture(self, x: torch.Tensor) -> None:
        self._static_in = torch.empty_like(x, memory_format=torch.contiguous_format)
        self._static_out = torch.empty(x.shape[0], self.linear.out_features, device=x.device, dtype=x.dtype)
        side = torch.cuda.Stream(device=x.device)  # warm-up (Triton compile, cuBLAS handle) off the capture
        side.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.stream(side):
            self._body()
        torch.cuda.current_stream(x.device).wait_stream(side)
        self._graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self._graph):
            self._body()
        self._key = (tuple(x.shape), x.dtype, x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._graph is None or self._key != (tuple(x.shape), x.dtype, x.device):
            self._capture(x)
        self._static_in.copy_(x)
        self._graph.replay()
        return self._static_out.clone()
