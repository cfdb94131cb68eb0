"""Builds ahead of judging: import a solution once so its extensions compile into the shared cache."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from kbench.core.solution import Solution
from kbench.judge.devices import resolve_device, worker_env
from kbench.judge.evaluation import DEFAULT_TIMEOUT
from kbench.judge.sandbox import Worker, WorkerLost


def build(solution: Solution | str | Path, device: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """Import a solution in a fresh worker, so that ``load_inline`` and the like
    compile into the shared cache; a later ``evaluate`` then loads it warm.

    Builds are CPU work: run many at once (threads suffice, each build is its
    own process) while each GPU measures one candidate at a time.
    Returns ``{"ok": bool, "seconds": float, "error": str | None}``.
    """
    solution = solution if isinstance(solution, Solution) else Solution.from_file(solution)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbench-build-") as tmp:
        path = Path(tmp) / "solution.py"
        path.write_text(solution.source)
        with Worker(worker_env(resolve_device(device))) as worker:
            try:
                answer = worker.request(
                    {"op": "build", "solution_path": str(path)}, started + timeout, "building the solution"
                )
            except WorkerLost as lost:
                answer = {"ok": False, "error": lost.detail}
    return {"ok": answer["ok"], "seconds": time.monotonic() - started, "error": answer.get("error")}
