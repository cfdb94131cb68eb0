"""Devices and the environment every worker starts with.

Which device an evaluation runs on (``cuda`` resolved to an index, a device
this machine lacks refused), an evaluation's turn on a GPU, where kbench's
cache lives, and each worker's environment (its device, its build folders:
which folder a candidate builds in is kbench.judge.builds.cache's to say).
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import torch

SHM_MIN_FREE_BYTES = 16 << 30


def cache_dir() -> Path:
    """Where compiled extensions are kept between evaluations (keyed by content)."""
    root = os.environ.get("KBENCH_CACHE") or Path.home() / ".cache" / "kbench"
    return Path(root)


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_device(device: str | None) -> str:
    """Validate a device name and give it an index (``cuda`` -> ``cuda:0``).

    ValueError for a device this machine does not have.
    """
    device = device or default_device()
    if device == "cpu":
        return device
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r}: no CUDA GPU is available on this machine")
        if device == "cuda":
            return f"cuda:{torch.cuda.current_device()}"
        index = device.split(":", 1)[1]
        if not index.isdigit() or int(index) >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: no such GPU ({torch.cuda.device_count()} visible)")
        return f"cuda:{int(index)}"
    raise ValueError(f"unknown device {device!r}: use cpu, cuda or cuda:N")


@contextmanager
def gpu_turn(device: str) -> Iterator[float]:
    """This process's turn on a GPU, against every kbench process of the same cache on
    the machine (two runs, an agent's ``./evaluate`` beside its run): one evaluation at
    a time per GPU, as within one executor, so that no timing shares its GPU. Yields
    the seconds waited. A lock file per device and ``CUDA_VISIBLE_DEVICES`` (the same
    GPU seen under another numbering is not recognised); nothing on the CPU."""
    if not device.startswith("cuda"):
        yield 0.0
        return
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{device}-{os.environ.get('CUDA_VISIBLE_DEVICES', 'all')}")
    path = cache_dir() / "locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed, or the process ends
        yield time.monotonic() - started


def worker_env(device: str, build_dir: Path | None = None) -> dict[str, str]:
    """A worker's environment: its device and its build caches (a candidate's own
    ``build_dir``; the reference's are shared)."""
    builds = build_dir or cache_dir()
    env = {
        "TORCH_EXTENSIONS_DIR": str(builds / "torch_extensions"),
        "TRITON_CACHE_DIR": str(builds / "triton"),
        "KBENCH_WORKER_DEVICE": device,  # its CUDA context is made as it starts, before any command
    }
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:  # an interpreter left on in the judge's environment would run a GPU's kernels on the CPU
        env["TRITON_INTERPRET"] = "0"
    return env


def scratch_root() -> str | None:
    """Where an evaluation's private folder goes. Outputs travel through files:
    keep them in memory (/dev/shm) where it is roomy."""
    try:
        stats = os.statvfs("/dev/shm")
    except OSError:
        return None
    roomy = stats.f_bavail * stats.f_frsize >= SHM_MIN_FREE_BYTES
    return "/dev/shm" if roomy and os.access("/dev/shm", os.W_OK) else None
