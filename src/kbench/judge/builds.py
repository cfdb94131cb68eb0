"""Builds ahead of judging: import a solution once so its extensions compile into the shared cache."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from kbench.core.solution import Solution
from kbench.judge.devices import resolve_device
from kbench.judge.evaluation import DEFAULT_TIMEOUT
from kbench.judge.process import WorkerLost, candidate_worker
from kbench.judge.sandbox import find_sandbox


def build(solution: Solution | str | Path, device: str | None = None, timeout: float = DEFAULT_TIMEOUT,
          *, sandbox: bool = True) -> dict[str, Any]:
    """Import a solution in a fresh candidate worker (sandboxed, as in ``evaluate``),
    so that ``load_inline`` and the like compile into its build cache; a later
    ``evaluate`` of the same source then loads it warm.

    Builds are CPU work: run many at once (threads suffice, each build is its
    own process) while each GPU measures one candidate at a time.
    Returns ``{"ok": bool, "seconds": float, "error": str | None}``.
    """
    solution = solution if isinstance(solution, Solution) else Solution.from_file(solution)
    device = resolve_device(device)
    confinement = find_sandbox() if sandbox else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbench-build-") as tmp:
        path = Path(tmp) / "solution.py"
        path.write_text(solution.source)
        with candidate_worker(device, solution.sha256, Path(tmp), confinement) as worker:
            try:
                answer = worker.request(
                    {"op": "build", "solution_path": str(path)}, started + timeout, "building the solution"
                )
            except WorkerLost as lost:
                answer = {"ok": False, "error": lost.detail}
    return {"ok": answer["ok"], "seconds": time.monotonic() - started, "error": answer.get("error")}
