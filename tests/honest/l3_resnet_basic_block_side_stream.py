"""Honest, two streams joined at level 3 (GPU only): the downsample branch (1x1
convolution by F.conv2d and its batch norm in Triton) runs on a side stream while the
main branch (two convolutions, batch norms in Triton) runs on the current one; the
current stream waits for the side one before a Triton kernel adds the branches and
applies the ReLU. Tensors crossing streams are recorded on the stream that uses them.
The side-stream flag is expected."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


def random_norm(norm: nn.Module) -> nn.Module:
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_(0.0, 0.2)
    return norm


@triton.jit
def channel_stats_kernel(z_ptr, stats_ptr, N, C, HW, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    s = tl.zeros([BLOCK], tl.float32)
    ss = tl.zeros([BLOCK], tl.float32)
    for n in range(0, N):
        base = (n * C + c).to(tl.int64) * HW
        for start in range(0, HW, BLOCK):
            p = start + tl.arange(0, BLOCK)
            z = tl.load(z_ptr + base + p, mask=p < HW, other=0.0)
            s += z
            ss += z * z
    count = N * HW
    mean = tl.sum(s, axis=0) / count
    tl.store(stats_ptr + c * 2, mean)
    tl.store(stats_ptr + c * 2 + 1, tl.maximum(tl.sum(ss, axis=0) / count - mean * mean, 0.0))


@triton.jit
def normalize_kernel(z_ptr, stats_ptr, w_ptr, b_ptr, y_ptr, n, C, HW, eps, RELU: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    c = (idx // HW) % C
    y = (tl.load(z_ptr + idx, mask=mask) - tl.load(stats_ptr + c * 2, mask=mask)) / tl.sqrt(
        tl.load(stats_ptr + c * 2 + 1, mask=mask) + eps)
    y = y * tl.load(w_ptr + c, mask=mask) + tl.load(b_ptr + c, mask=mask)
    if RELU:
        y = tl.maximum(y, 0.0)
    tl.store(y_ptr + idx, y, mask=mask)


@triton.jit
def add_relu_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    tl.store(y_ptr + idx, tl.maximum(tl.load(a_ptr + idx, mask=mask) + tl.load(b_ptr + idx, mask=mask), 0.0), mask=mask)


def batch_norm(z: torch.Tensor, norm: nn.BatchNorm2d, relu: bool) -> torch.Tensor:
    z = z.contiguous()
    N, C, H, W = z.shape
    stats = torch.empty(C, 2, device=z.device, dtype=torch.float32)
    channel_stats_kernel[(C,)](z, stats, N, C, H * W, BLOCK=1024)
    y = torch.empty_like(z)
    normalize_kernel[(triton.cdiv(z.numel(), 2048),)](
        z, stats, norm.weight, norm.bias, y, z.numel(), C, H * W, norm.eps, RELU=relu, BLOCK=2048
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = random_norm(nn.BatchNorm2d(out_channels))
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = random_norm(nn.BatchNorm2d(out_channels))
        self.down_conv = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
        self.down_bn = random_norm(nn.BatchNorm2d(out_channels))
        self._side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._side is None:
            self._side = torch.cuda.Stream(device=x.device)
        current = torch.cuda.current_stream(x.device)
        stride = self.conv1.stride
        self._side.wait_stream(current)
        with torch.cuda.stream(self._side):
            short = batch_norm(F.conv2d(x, self.down_conv.weight, None, stride=stride), self.down_bn, relu=False)
        x.record_stream(self._side)
        out = batch_norm(F.conv2d(x, self.conv1.weight, None, stride=stride, padding=1), self.bn1, relu=True)
        out = batch_norm(F.conv2d(out, self.conv2.weight, None, padding=1), self.bn2, relu=False)
        current.wait_stream(self._side)
        short.record_stream(current)
        y = torch.empty_like(out)
        add_relu_kernel[(triton.cdiv(y.numel(), 2048),)](out, short, y, y.numel(), BLOCK=2048)
        return y
