"""Honest, KernelBench style, with the reproducibility lines models paste at the top:
``torch.manual_seed(42)``, ``torch.backends.cudnn.deterministic = True`` and
``torch.backends.cudnn.benchmark = False``. Deterministic cuDNN can only narrow the choice of
algorithms (slower or the same, as precise); the judge pins ``benchmark`` off itself. The
convolution without its bias by F.conv2d, the bias and the ReLU in one Triton kernel."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

torch.manual_seed(42)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False


@triton.jit
def channel_bias_relu_kernel(z_ptr, b_ptr, y_ptr, n, C, HW, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    channel = (idx // HW) % C
    z = tl.load(z_ptr + idx, mask=mask) + tl.load(b_ptr + channel, mask=mask)
    tl.store(y_ptr + idx, tl.maximum(z, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = F.conv2d(x, self.conv.weight, None, padding=self.conv.padding).contiguous()
        y = torch.empty_like(z)
        _, C, H, W = z.shape
        channel_bias_relu_kernel[(triton.cdiv(z.numel(), 2048),)](z, self.conv.bias, y, z.numel(), C, H * W,
                                                                   BLOCK=2048)
        return y
