"""One writer per run: a ``kbench run`` holds its run while it judges, and a second one refuses.

Two processes judging one run in one store would both judge every sample left, and the slower
would find its verdicts already stored only when it commits them: all its work thrown away
(issue 59). So a run is claimed before anything is judged: an exclusive ``flock`` on a lock
file beside the store (``.<store name>.<run>.lock``), which names its holder. The kernel
drops the lock when its process ends, however it ends (Ctrl-C, SIGKILL, a lost machine): a
lock left by a dead process never blocks. Runs of one store with different names are claimed
apart and may be judged side by side (the store is SQLite; each commit is its own
transaction). The file is removed by its holder on release; one that stays (a killed holder)
is taken over by the next claim.
"""

from __future__ import annotations

import fcntl
import os
import socket
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kbench.runs.manifest import now


class RunBusy(Exception):
    """Another process is judging this run in this store now (``kbench run`` exits BUSY_EXIT)."""


BUSY_EXIT = 4  # kbench run's exit status when another process holds the run


def lock_path(store: Path, run: str) -> Path:
    """Where the claim of ``run`` in the store at ``store`` is held (run names are [A-Za-z0-9._-])."""
    store = Path(store).resolve()
    return store.with_name(f".{store.name}.{run}.lock")


@contextmanager
def claimed(store: Path, run: str) -> Iterator[None]:
    """Hold ``run`` of the store at ``store`` for the block; RunBusy at once, naming the holder,
    when another process holds it."""
    path = lock_path(store, run)
    fd = _lock(path, run)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}, since {now()}".encode())
        yield
    finally:
        try:
            path.unlink(missing_ok=True)  # before unlocking: a claim waiting on this file then finds it gone
        finally:
            os.close(fd)


def _lock(path: Path, run: str) -> int:
    """An open descriptor of ``path`` holding its exclusive lock: the file at ``path`` now, not one
    a releasing holder removed between our open and our lock (then opened again)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise RunBusy(f"run {run!r} is being judged by {holder} in {path.parent}: one process judges a run at "
                          "a time; wait for it to end (or stop it), then the same command resumes the run") from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
