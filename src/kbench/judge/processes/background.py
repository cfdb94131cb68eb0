"""Work the judge runs beside its measurements, stopped while anything is timed.

Builds ahead (kbench.judge.builds.ahead: a sandboxed worker importing a solution, and
the ninja, g++ and nvcc it starts) and spare workers starting (kbench.judge.processes.spares:
``python``, ``import torch``, a CUDA context) are CPU work. On the H200, three
honest solutions were rejected by ``trusted-clock`` while 14 ``nvcc`` builds ran on
the machine's 16 cores, and none once the builds were done (issue 28): the timed
processes' clocks, and the judge's clock around them, waited for CPUs. So while an
evaluation times anything (its candidate's rounds and the baseline rounds,
``evaluation._measure``), every worker registered here is stopped, its whole process
tree (``Worker.pause``, SIGSTOP), and continues after (SIGCONT): the timed
processes then see the machine as a run without builds ahead would.

Stopping, rather than giving the timed processes cores of their own
(``os.sched_setaffinity``): compilers on the other cores still share the last-level
cache, the memory bandwidth and the package's clock frequency with the timed
processes, a 2-core machine has no core to spare, and a stopped process holds no
CPU at all. The price: builds progress only while nothing is timed (docs/judge.md).

One per judge process (``BACKGROUND``); evaluations on several devices at once
count: the background stays stopped until the last of them has finished timing.
A build's time limit does not count the time it spent stopped (``Held.paused_seconds``).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import psutil

from kbench.judge.processes.process import STOPPED_OR_GONE, Worker

STOP_PASSES = 3  # a process forked while its tree was being stopped is caught by the next pass


@dataclass
class Held:
    """A registered worker and how long it has been stopped while registered."""

    worker: Worker
    paused: float = 0.0
    since: float | None = None  # when the stop in progress began

    def paused_seconds(self) -> float:
        since = self.since
        return self.paused + (time.monotonic() - since if since is not None else 0.0)


class Background:
    """The judge's work beside its measurements: stopped from the first ``pause`` to
    the last ``resume`` (one pair per evaluation timing anything)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._held: dict[int, Held] = {}
        self._timing = 0

    @property
    def paused(self) -> bool:
        return self._timing > 0

    def add(self, worker: Worker) -> Held:
        """Register ``worker`` (stopped at once if something is being timed)."""
        with self._lock:
            held = self._held.setdefault(id(worker), Held(worker))
            if self._timing and held.since is None:
                _stop([worker])
                held.since = time.monotonic()
            return held

    def remove(self, worker: Worker) -> None:
        """No longer background (a spare taken by an evaluation, a build done): running again."""
        with self._lock:
            held = self._held.pop(id(worker), None)
            if held is not None and held.since is not None:
                worker.resume()
                held.paused, held.since = held.paused_seconds(), None

    @contextmanager
    def running(self, worker: Worker) -> Iterator[Held]:
        """``worker`` registered for the block."""
        held = self.add(worker)
        try:
            yield held
        finally:
            self.remove(worker)

    def pause(self) -> None:
        """Something is about to be timed: stop every registered worker's process tree."""
        with self._lock:
            self._timing += 1
            if self._timing == 1:
                _stop([held.worker for held in self._held.values()])
                now = time.monotonic()
                for held in self._held.values():
                    held.since = now

    def resume(self) -> None:
        """The timing that paused has ended: once none is left, everything continues."""
        with self._lock:
            self._timing = max(0, self._timing - 1)
            if self._timing == 0:
                for held in self._held.values():
                    held.worker.resume()
                    if held.since is not None:
                        held.paused, held.since = held.paused_seconds(), None

    @contextmanager
    def quiet(self) -> Iterator[None]:
        self.pause()
        try:
            yield
        finally:
            self.resume()

    def workers(self) -> list[Worker]:
        with self._lock:
            return [held.worker for held in self._held.values()]


def _stop(workers: list[Worker]) -> None:
    """Stop every process of every worker's tree: all signalled first, then waited for,
    again while some process (forked after its tree was listed) still runs."""
    for worker in workers:
        worker.pause(settle_seconds=0.0)
    for _ in range(STOP_PASSES):
        for worker in workers:
            worker.pause()
        if not any(_running_in_tree(worker) for worker in workers):
            return


def _running_in_tree(worker: Worker) -> bool:
    try:
        root = psutil.Process(worker.process.pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return False
    for process in tree:
        try:
            if process.status() not in STOPPED_OR_GONE:
                return True
        except psutil.Error:
            continue
    return False


BACKGROUND = Background()


def pause() -> None:
    """Stop the judge's background work (builds ahead, spares) while something is timed."""
    BACKGROUND.pause()


def resume() -> None:
    BACKGROUND.resume()
