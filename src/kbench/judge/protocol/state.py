"""Process-wide PyTorch settings that change speed or numerics, pinned by the judge.

Both workers (reference and candidate) pin the same values before anything
runs, so a baseline and a candidate are measured under the same rules: fp32
means fp32 (no TF32 in matrix products or cuDNN convolutions, which PyTorch
allows for convolutions by default), cuDNN picks algorithms without
benchmarking, and the default dtype is float32. The values travel with every
verdict, and ``read()`` lets the guard see whether a candidate changed them.
"""

from __future__ import annotations

from typing import Any

import torch

from kbench.judge.protocol.l2 import persisting_limit_bytes

PINNED: dict[str, Any] = {
    "cuda.matmul.allow_tf32": False,
    "cudnn.allow_tf32": False,
    "float32_matmul_precision": "highest",
    "cudnn.benchmark": False,
    "cudnn.deterministic": False,
    "default_dtype": "torch.float32",
}


def read() -> dict[str, Any]:
    return {
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cudnn.benchmark": torch.backends.cudnn.benchmark,
        "cudnn.deterministic": torch.backends.cudnn.deterministic,
        "default_dtype": str(torch.get_default_dtype()),
    }


def pin() -> dict[str, Any]:
    """Apply the pinned values and return what is now in force."""
    torch.backends.cuda.matmul.allow_tf32 = PINNED["cuda.matmul.allow_tf32"]
    torch.backends.cudnn.allow_tf32 = PINNED["cudnn.allow_tf32"]
    torch.set_float32_matmul_precision(PINNED["float32_matmul_precision"])
    torch.backends.cudnn.benchmark = PINNED["cudnn.benchmark"]
    torch.backends.cudnn.deterministic = PINNED["cudnn.deterministic"]
    torch.set_default_dtype(torch.float32)
    return read()


def read_device() -> dict[str, Any]:
    """Settings of the worker's CUDA context that change what a timed call finds on
    the device: the persisting-L2 set-aside (kbench.judge.protocol.l2), which keeps lines
    through the judge's cache flush. Not pinned (under MPS the server sets it, and
    the driver's default is not 0 on every GPU), compared with what they were
    before the candidate's code ran: larger is a finding."""
    return {"persisting_l2_bytes": persisting_limit_bytes()}
