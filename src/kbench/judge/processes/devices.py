"""Devices and the environment every worker starts with.

Which device an evaluation runs on (``cuda`` resolved to an index, a device
this machine lacks refused), an evaluation's turn on a GPU, and where compiled
extensions and Triton's cache live, keyed by content.

A build survives interruption (issue 59: one Ctrl-C during a ``load_inline``
build left torch's ``lock`` file in the solution's cache, and every later
evaluation of the same source waited on it until its time limit). A sandboxed
candidate never builds in the cache itself: it builds in a folder of its own
(``private_build_dir``, a copy of the cache where there is one), which becomes
the cache, whole, by one rename, only where there is none yet and only with no
build left half-made in it (``publish_build``); a worker killed at any point
leaves a folder nobody reads, removed once its process is gone. Once made, a
cache is never written again, so two evaluations of one source share no
writable state (issue 57). An unsandboxed worker (``--no-sandbox``: its build
paths must stay the same for ninja to find its build up to date) works in the
cache itself, holding a lease (``shared_build_lease``) for as long as it lives;
a ``lock`` found where no lease is held is stale (its owner died) and cleared.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

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
    directory. A sandboxed worker builds in a copy of its own (``private_build_dir``), and
    the first whole build becomes this folder (``publish_build``)."""
    key = hashlib.sha256(f"{solution_sha256}\0{build_environment()}".encode()).hexdigest()
    return cache_dir() / "candidates" / key[:24]


PRIVATE_PREFIX = "private-"  # a worker's own build folder: private-<the judge's pid>-<random>
_builds = threading.local()


@contextmanager
def fresh_builds() -> Iterator[None]:
    """Within it, every candidate worker this thread starts builds in a folder of its own that
    starts empty and is removed after, never kept as the cache: an evaluation that must share no
    state with any before it (kbench.judge.confirmation) builds everything anew."""
    before = getattr(_builds, "fresh", False)
    _builds.fresh = True
    try:
        yield
    finally:
        _builds.fresh = before


def building_fresh() -> bool:
    return getattr(_builds, "fresh", False)


def private_build_dir(cache: Path, seed: bool = True) -> Path:
    """A build folder of one worker's own beside ``cache`` (on its file system, so that
    ``publish_build`` is one rename), holding a copy of ``cache`` where ``seed`` and the cache
    exists and no unsandboxed worker builds in it now."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(cache.parent)
    private = cache.parent / f"{PRIVATE_PREFIX}{os.getpid()}-{secrets.token_hex(8)}"
    private.mkdir()
    if seed and cache.is_dir():
        with _claimed(cache) as unused:
            if unused:
                shutil.copytree(cache, private, symlinks=True, dirs_exist_ok=True)
    return private


def publish_build(private: Path, cache: Path) -> None:
    """A worker's own build folder once the worker is gone: the cache, whole, where there is
    none yet (or only the empty folder an unsandboxed worker made and left) and the folder holds
    a build with none left half-made in it (torch's ``lock``: an interrupted build is never
    kept); removed otherwise. Another process that got there first wins."""
    try:
        if any(private.iterdir()) and not _locks(private) and not (cache.exists() and any(cache.iterdir())):
            with _claimed(cache) as unused:
                if unused:
                    if cache.is_dir():
                        cache.rmdir()  # empty: nothing lost
                    os.rename(private, cache)
                    return
    except OSError:
        pass
    shutil.rmtree(private, ignore_errors=True)


def shared_build_lease(cache: Path) -> IO:
    """For an unsandboxed worker, which builds in ``cache`` itself: a lease on it, held until the
    returned file is closed (or the process ends: the kernel drops the lock). Where nobody else
    holds one, the locks left in the cache are stale (a build whose owner died) and cleared first."""
    cache.mkdir(parents=True, exist_ok=True)
    handle = open(_lease_path(cache), "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _clear_locks(cache)
    except OSError:
        pass
    fcntl.flock(handle, fcntl.LOCK_SH)  # from exclusive, or waiting out another's brief exclusive one
    return handle


def clear_stale_locks(cache: Path) -> bool:
    """The locks left in ``cache`` cleared where no unsandboxed worker holds a lease on it (every
    one then belongs to a build whose worker is gone); whether it was free to be read whole."""
    if not cache.is_dir():
        return True
    with _claimed(cache) as unused:
        return unused


@contextmanager
def _claimed(cache: Path) -> Iterator[bool]:
    """Whether no worker builds in ``cache`` itself now (none holds its lease); while True, none
    starts, and the locks left in it, stale, are cleared."""
    with open(_lease_path(cache), "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        _clear_locks(cache)
        yield True


def _lease_path(cache: Path) -> Path:
    return cache.parent / f"{cache.name}.lease"


def _locks(folder: Path) -> list[Path]:
    """torch's build locks (``<extension>/lock``, a FileBaton) anywhere under ``folder``."""
    return [p for p in folder.rglob("lock") if p.is_file()] if folder.is_dir() else []


def _clear_locks(cache: Path) -> None:
    for lock in _locks(cache):
        lock.unlink(missing_ok=True)


_swept: set[Path] = set()


def _remove_abandoned(root: Path) -> None:
    """Once per process and folder: the private build folders of judges that are gone (killed
    in a build, say), which nobody will read or publish."""
    if root in _swept:
        return
    _swept.add(root)
    for folder in root.glob(f"{PRIVATE_PREFIX}*"):
        owner = folder.name[len(PRIVATE_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
