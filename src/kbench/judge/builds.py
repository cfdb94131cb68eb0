"""Builds ahead of judging: import a solution once so its extensions compile into the shared cache."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from kbench.core.solution import Solution
from kbench.judge.background import BACKGROUND, Held
from kbench.judge.devices import resolve_device
from kbench.judge.evaluation import DEFAULT_TIMEOUT
from kbench.judge.process import Worker, WorkerLost, candidate_worker
from kbench.judge.sandbox import find_sandbox


def build(solution: Solution | str | Path, device: str | None = None, timeout: float = DEFAULT_TIMEOUT,
          *, sandbox: bool = True) -> dict[str, Any]:
    """Import a solution in a fresh candidate worker (sandboxed, as in ``evaluate``),
    so that ``load_inline`` and the like compile into its build cache; a later
    ``evaluate`` of the same source then loads it warm.

    Builds are CPU work: run many at once (threads suffice, each build is its
    own process) while each GPU measures one candidate at a time. A build is
    background work (kbench.judge.background): stopped while any evaluation of
    this process times anything, and ``timeout`` does not count that time.
    Returns ``{"ok": bool, "seconds": float, "error": str | None}``.
    """
    solution = solution if isinstance(solution, Solution) else Solution.from_file(solution)
    device = resolve_device(device)
    confinement = find_sandbox() if sandbox else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbench-build-") as tmp:
        path = Path(tmp) / "solution.py"
        path.write_text(solution.source)
        with candidate_worker(device, solution.sha256, Path(tmp), confinement) as worker, \
                BACKGROUND.running(worker) as held:
            try:
                answer = _answer(worker, held, {"op": "build", "solution_path": str(path)}, started + timeout)
            except WorkerLost as lost:
                answer = {"ok": False, "error": lost.detail}
    return {"ok": answer["ok"], "seconds": time.monotonic() - started, "error": answer.get("error")}


RECHECK_SECONDS = 1.0


def _answer(worker: Worker, held: Held, message: dict[str, Any], deadline: float) -> dict[str, Any]:
    """The worker's answer by ``deadline`` pushed back by the time it spent stopped."""
    worker.send(message)
    while True:
        try:
            return worker.receive(min(deadline + held.paused_seconds(), time.monotonic() + RECHECK_SECONDS),
                                  "building the solution")
        except WorkerLost as lost:
            if lost.kind != "timeout" or time.monotonic() >= deadline + held.paused_seconds():
                raise
