"""Honest: 2-D max pooling read directly from the input, one program per (image,
channel) plane block of outputs, padding as -inf."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def maxpool2d_kernel(x_ptr, y_ptr, H, W, OH, OW, KS: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
                     BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    o = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    omask = o < OH * OW
    oh = o // OW
    ow = o % OW
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for kh in range(0, KS):
        for kw in range(0, KS):
            ih = oh * STRIDE - PAD + kh
            iw = ow * STRIDE - PAD + kw
            ok = omask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x = tl.load(x_ptr + plane * H * W + ih * W + iw, mask=ok, other=float("-inf"))
            best = tl.maximum(best, x)
    tl.store(y_ptr + plane * OH * OW + o, best, mask=omask)


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, H, W = x.shape
        k, s, p = self.kernel_size, self.stride, self.padding
        OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
        y = torch.empty(N, C, OH, OW, device=x.device, dtype=x.dtype)
        maxpool2d_kernel[(N * C, triton.cdiv(OH * OW, 256))](x, y, H, W, OH, OW, KS=k, STRIDE=s, PAD=p, BLOCK=256)
        return y
