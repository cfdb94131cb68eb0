"""Honest, a second stream joined properly (GPU only): the ReLU kernel (Triton) runs on
a side stream of the module's own; the side stream first waits for the current one
(the input is ready), the current stream then waits for the side one (the output is
ready when forward returns), and both tensors are recorded on the side stream so the
caching allocator does not reuse them early. The side-stream flag is expected."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    tl.store(y_ptr + idx, tl.maximum(tl.load(x_ptr + idx, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._side is None:
            self._side = torch.cuda.Stream(device=x.device)
        current = torch.cuda.current_stream(x.device)
        x = x.contiguous()
        y = torch.empty_like(x)
        self._side.wait_stream(current)
        with torch.cuda.stream(self._side):
            relu_kernel[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
        x.record_stream(self._side)
        y.record_stream(self._side)
        current.wait_stream(self._side)
        return y
