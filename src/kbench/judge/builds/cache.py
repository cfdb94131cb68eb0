"""The build cache: where a candidate's compiled extensions and Triton kernels live,
keyed by its source and by what builds it.

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
import secrets
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

import torch

from kbench.judge.processes.devices import cache_dir


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
