"""Devices and the environment every worker starts with.

Which device an evaluation runs on (``cuda`` resolved to an index, a device
this machine lacks refused), an evaluation's turn on a GPU, and where compiled
extensions and Triton's cache live, shared by every worker and keyed by content.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
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


def device_name(device: torch.device) -> str:
    """What a verdict names the device by: the GPU's name, or the CPU's."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform

    return platform.processor() or platform.machine() or "cpu"


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


def candidate_build_dir(solution_sha256: str) -> Path:
    """A candidate's own build caches, keyed by its source and by what builds it (the
    toolchain, ``build_environment``): the only cache it can write, so it cannot plant a
    binary that another solution would load, and a binary built for another torch or
    compiler is never loaded. Two solutions whose extensions share a name never share a
    directory; one solution judged by many processes at once shares one, where
    PyTorch's own lock file serialises the build."""
    key = hashlib.sha256(f"{solution_sha256}\0{build_environment()}".encode()).hexdigest()
    return cache_dir() / "candidates" / key[:24]


@functools.lru_cache(maxsize=1)
def build_environment() -> str:
    """What a compiled extension depends on besides its source: Python, torch (its build
    and CUDA), Triton, the target architectures, and the C++ and CUDA compilers' versions."""
    from kbench.core.versions import package_version

    parts = [sys.version, torch.__version__, str(torch.version.cuda), str(torch.version.git_version),
             str(package_version("triton")), os.environ.get("TORCH_CUDA_ARCH_LIST", ""),
             _version_line(os.environ.get("CXX", "c++"), 0), _version_line(_nvcc(), -1)]
    return "\n".join(parts)


def _nvcc() -> str:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    return str(Path(home) / "bin" / "nvcc") if home else (shutil.which("nvcc") or "nvcc")


def _version_line(tool: str, line: int) -> str:
    """Line ``line`` of ``tool --version`` (a C++ compiler names itself first, nvcc its build last)."""
    try:
        done = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return f"{tool}: not found"
    lines = [text for text in done.stdout.splitlines() if text.strip()]
    return lines[line] if lines else f"{tool}: no version"


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
