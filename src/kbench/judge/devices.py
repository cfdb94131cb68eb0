"""Devices and the environment every worker starts with.

Which device an evaluation runs on (``cuda`` resolved to an index, a device
this machine lacks refused), and where compiled extensions and Triton's cache
live, shared by every worker and keyed by content.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def candidate_build_dir(solution_sha256: str) -> Path:
    """A candidate's own build caches, keyed by its source: the only cache it can write,
    so it cannot plant a binary that another solution would load."""
    return cache_dir() / "candidates" / solution_sha256[:24]


def worker_env(device: str, build_dir: Path | None = None) -> dict[str, str]:
    """A worker's environment: its device and its build caches (a candidate's own
    ``build_dir``; the reference's are shared)."""
    builds = build_dir or cache_dir()
    env = {
        "TORCH_EXTENSIONS_DIR": str(builds / "torch_extensions"),
        "TRITON_CACHE_DIR": str(builds / "triton"),
    }
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
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
