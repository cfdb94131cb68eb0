"""Builds ahead of judging: import a solution once so its extensions compile into the shared cache.

Which solutions are worth it (``needs_build``) and how many builds run at once
(``build_slots``) decide when a run's first verdict comes and how busy its GPUs
stay (kbench.judge.executor, docs/judge.md "Builds ahead").
"""

from __future__ import annotations

import collections
import os
import re
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

from kbench.core.solution import Solution
from kbench.judge.processes.background import BACKGROUND, Held
from kbench.judge.processes.devices import resolve_device
from kbench.judge.processes.process import DEFAULT_TIMEOUT, Worker, WorkerLost, candidate_worker
from kbench.judge.trusted.reference import load_message
from kbench.judge.processes.sandbox import find_sandbox
from kbench.suite.problem import Problem, resolve_size


def build(solution: Solution | str | Path, device: str | None = None, timeout: float = DEFAULT_TIMEOUT,
          *, sandbox: bool = True, problem: Problem | None = None, size: str = "auto",
          dtype: str = "float32") -> dict[str, Any]:
    """Import a solution in a fresh candidate worker (sandboxed, as in ``evaluate``),
    so that ``load_inline`` and the like compile into its build cache; a later
    ``evaluate`` of the same source then loads it warm. With ``problem`` (at ``size``
    and ``dtype``, as the evaluation will judge it), the worker also makes the model, on
    the CPU: a solution that compiles in ``ModelNew.__init__`` is built ahead too (on
    the H200 one held the GPU 62 s in its evaluation's load while built solutions
    waited, docs/measurements/2026-12-02-builds-ahead.md).

    Builds are CPU work: run many at once (threads suffice, each build is its
    own process) while each GPU measures one candidate at a time. A build is
    background work (kbench.judge.processes.background): stopped while any evaluation of
    this process times anything, and ``timeout`` does not count that time.
    Returns ``{"ok", "seconds", "import_seconds", "init_seconds", "error"}``: ``seconds``
    from the call, the worker's start included; the solution's import and its model's
    making in the worker (where the worker answered; None otherwise).
    """
    solution = solution if isinstance(solution, Solution) else Solution.from_file(solution)
    device = resolve_device(device)
    confinement = find_sandbox() if sandbox else None
    problem_fields = load_message(problem, device, resolve_size(size, device), BUILD_INIT_SEED, dtype) if problem else {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbench-build-") as tmp:
        path = Path(tmp) / "solution.py"
        path.write_text(solution.source)
        with candidate_worker(device, solution.sha256, Path(tmp), confinement) as worker, \
                BACKGROUND.running(worker) as held:
            try:
                answer = _answer(worker, held, {**problem_fields, "op": "build", "solution_path": str(path)},
                                 started + timeout)
            except WorkerLost as lost:
                answer = {"ok": False, "error": lost.detail}
    return {"ok": answer["ok"], "seconds": time.monotonic() - started, "import_seconds": answer.get("import_seconds"),
            "init_seconds": answer.get("init_seconds"), "error": answer.get("error")}


RECHECK_SECONDS = 1.0
BUILD_INIT_SEED = 0  # the model a build makes is dropped: any seed builds what its __init__ builds


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


# What an import compiles into the build cache a build ahead warms (TORCH_EXTENSIONS_DIR): torch's C++/CUDA
# extensions. Triton compiles at a kernel's first call, not at import, so a build ahead of a Triton solution
# only starts a worker for nothing. Matched in the text, comments included: a false match costs a build
# ahead, a miss costs the device the build in the evaluation's own load.
BUILD_MARKERS = re.compile(r"cpp_extension|load_inline|(?<![\w.])load\s*\(")

# One cold load_inline build at a time uses up to 2 cores: ninja compiles main.cpp (g++) beside cuda.cu
# (nvcc, whose front ends run one after the other), then links (docs/measurements/2026-12-02-builds-ahead.md).
CORES_PER_BUILD = 2
# Once a device judges, builds stop while anything is timed (kbench.judge.processes.background, for honest
# verdicts), so a build uses its cores only part of the time and more of them keep the device fed: on
# the H200's 16 cores, 7 at once kept it busy 76% of a run of 40 after the first verdict, 10 at once 94%
# (docs/measurements/2026-12-02-builds-ahead.md, "Cores, builds at once, and a run of 40").
CORES_PER_BUILD_BESIDE_JUDGING = Fraction(7, 5)
# Kept for each device's evaluation (the judge's thread, the candidate's and the reference's workers, the
# next pair starting ahead) while builds run: they are stopped only while something is timed.
CORES_PER_EVALUATION = 2


def needs_build(source: str) -> bool:
    """Whether importing ``source`` may compile an extension (so a build ahead saves its
    evaluation the compile); conservative: any mention of torch's extension builder."""
    return BUILD_MARKERS.search(source) is not None


def build_slots(build_jobs: int, devices: int, cpus: int | None = None, *, judging: bool = False) -> int:
    """How many builds run at once: at most ``build_jobs`` (the user's bound; 0: none ahead),
    and no more than the CPUs left beside ``devices`` evaluations run without slowing each
    other, at least one. Before the first verdict (not ``judging``) nothing is timed and
    every build runs flat out, so the count is what builds at full speed: builds started
    together beyond it finish together, later (on the H200's 16 cores 14 cold builds took 137 s
    each where one alone took 55 s, and the GPU waited for the first of them). Once
    ``judging``, builds stop while the device times, and the count is what keeps it fed."""
    if build_jobs <= 0:
        return 0
    cpus = cpus or available_cpus()
    per_build = CORES_PER_BUILD_BESIDE_JUDGING if judging else CORES_PER_BUILD
    return max(1, min(build_jobs, int((cpus - CORES_PER_EVALUATION * devices) // per_build)))


class BuildsAhead:
    """Builds of jobs on threads of their own, started in the order the jobs are added:
    ``build_slots`` at once until the first ends, then ``build_slots(judging=True)``
    (the first verdict waits for one build at full speed; after it the device's timing
    pauses the builds, and more at once keep it fed). ``built(job)`` is called as each
    ends, failed or not (its evaluation reports the failure). After ``close`` no build
    starts, and one still running ends without ``built``."""

    def __init__(self, prebuild: Callable[[Any], Any], built: Callable[[Any], None], first: int, judging: int):
        self.prebuild, self.built = prebuild, built
        self._limit, self._judging = first, max(first, judging)
        self._pool = ThreadPoolExecutor(self._judging, "kbench-build")
        self._waiting: collections.deque = collections.deque()
        self._running = 0
        self._closed = False
        self._lock = threading.RLock()  # a future already done runs its callback in the thread adding it

    def add(self, job: Any) -> None:
        with self._lock:
            self._waiting.append(job)
        self._start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._waiting.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self) -> None:
        with self._lock:
            while not self._closed and self._waiting and self._running < self._limit:
                job = self._waiting.popleft()
                self._running += 1
                self._pool.submit(self.prebuild, job).add_done_callback(lambda _, job=job: self._ended(job))

    def _ended(self, job: Any) -> None:
        with self._lock:
            self._running -= 1
            self._limit = self._judging
            closed = self._closed
        if not closed:
            self.built(job)
        self._start()


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
