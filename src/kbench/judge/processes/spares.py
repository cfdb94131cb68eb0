"""Workers started ahead of need, so that an evaluation in a batch does not wait for them.

Starting a worker (``python -I``, ``import torch``, a CUDA context) takes about
2 s on the H200 machine, a third of a warm evaluation. When many evaluations
run one after another on a device (``kbench.evaluate_many``, ``kbench run``),
the next evaluation's reference and candidate workers start while the
current one runs: each is a fresh process that has run nothing yet, exactly
what a worker started on demand would be, so nothing is trusted that was
not before. A candidate's is sandboxed with a scratch folder and a build
folder of its own, made before anyone knows whose it will be: when it is
taken, its solution's content-keyed build cache (kbench.judge.processes.devices) is
copied into that build folder (the sandbox shows every build folder at the
same path, so a build made in one sandbox is up to date in the next), and
afterwards a build it made becomes that cache if there was none. A solution
can only ever fill its own cache, as before.

Two pairs are kept starting (``PAIRS_AHEAD``), the first two as soon as a device
thread starts (``start_ahead``: a run waiting for its first builds then has them
ready); a new one starts when one is taken, at an evaluation's start: its start (CPU work, and a CUDA context)
overlaps the untimed parts of the next two evaluations (start, trials, end),
and is stopped (SIGSTOP) while any evaluation times the candidate or the
baselines, with the builds ahead (kbench.judge.processes.background); an evaluation
whose spares are not ready yet waits for them in its ``load`` phase. A
``LocalExecutor`` on GPUs
(or one made with ``ahead=True``) keeps spares per device thread (``ahead``),
and ``evaluate`` takes from them by itself; without a sandbox none are kept
(the build cache's paths would differ from one worker to the next, and builds
would be made again). On the H200 a warm level-1 evaluation then takes 3.4 s
at the median instead of 5.6 s, and null candidates judged with and without
spares, in turn, spread alike (docs/measurements/2026-11-29-judge-wall-time-and-scaling.md).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kbench.judge.processes.background import BACKGROUND
from kbench.judge.builds.cache import candidate_build_dir, clear_stale_locks
from kbench.judge.processes.devices import cache_dir, scratch_root, worker_env
from kbench.judge.processes.process import Worker, candidate_worker, close_all
from kbench.judge.processes.sandbox import Sandbox, find_sandbox, give_to_candidate


@dataclass
class _Pair:
    """A reference worker and a sandboxed candidate worker, with the candidate's folders, and a
    worker for eager's timing (a consumer of the reference's draws: kbench.judge.trusted.reference)."""

    reference: Worker
    candidate: Worker
    scratch: Path
    build: Path
    eager: Worker

    def workers(self) -> tuple[Worker, Worker, Worker]:
        return self.reference, self.candidate, self.eager

    def discard(self, keep_build_as: Path | None = None) -> None:
        """Close both workers and remove the folders; the build first becomes
        ``keep_build_as`` where that does not exist yet and the build is not empty."""
        for worker in self.workers():
            BACKGROUND.remove(worker)
        close_all(list(self.workers()))
        shutil.rmtree(self.scratch, ignore_errors=True)
        try:
            if keep_build_as is not None and not keep_build_as.exists() and any(self.build.iterdir()):
                os.rename(self.build, keep_build_as)  # atomic; another process that got there first wins
        except OSError:
            pass
        shutil.rmtree(self.build, ignore_errors=True)


@dataclass
class Taken(_Pair):
    """One evaluation's pair, from the spares, given to the solution ``solution_sha256``."""

    solution_sha256: str = ""

    def finish(self) -> None:
        """Close both workers; keep the candidate's build as its cache if it had none."""
        self.discard(keep_build_as=candidate_build_dir(self.solution_sha256))


# Pairs kept starting ahead per device. One pair had only the end of an
# evaluation and the next one's start to finish starting in (it is stopped
# while anything is timed), and the next load waited for it (0.44 s at the
# median on the H200); two pairs give each one two evaluations' untimed time.
PAIRS_AHEAD = 2


class Spares:
    """Ready reference and sandboxed candidate workers for ``device``, ``depth`` pairs ahead."""

    def __init__(self, device: str, sandbox: Sandbox | None, depth: int | None = None):
        self.device, self.sandbox = device, sandbox
        self.depth = max(1, depth or PAIRS_AHEAD)
        self._ready: deque[_Pair] = deque()

    def take(self, solution_sha256: str, memory_limit_bytes: int | None) -> Taken:
        """The oldest ready pair (started now if none is), given to a solution; the next pairs start."""
        if not self._ready:
            self._ready.append(self._start())
        pair = self._ready.popleft()
        for worker in pair.workers():  # the evaluation's own now, no longer background
            BACKGROUND.remove(worker)
        cache = candidate_build_dir(solution_sha256)
        if cache.is_dir() and clear_stale_locks(cache):  # not while an unsandboxed build is made in it
            shutil.copytree(cache, pair.build, symlinks=True, dirs_exist_ok=True, copy_function=_copy_if_absent)
            if self.sandbox is not None:
                give_to_candidate(pair.build)
        if memory_limit_bytes:
            pair.candidate.memory_limit = memory_limit_bytes
        self.prepare()
        return Taken(pair.reference, pair.candidate, pair.scratch, pair.build, pair.eager, solution_sha256)

    def prepare(self) -> None:
        """Start pairs until ``depth`` are ready or starting."""
        while len(self._ready) < self.depth:
            self._ready.append(self._start())

    def workers(self) -> list[Worker]:
        """Every spare worker, started or still starting."""
        return [worker for pair in self._ready for worker in pair.workers()]

    def _start(self) -> _Pair:
        scratch = Path(tempfile.mkdtemp(prefix="kbench-", dir=scratch_root()))
        build = cache_dir() / "candidates" / f"spare-{secrets.token_hex(8)}"
        build.mkdir(parents=True)
        reference, eager = Worker(worker_env(self.device)), Worker(worker_env(self.device))
        candidate = candidate_worker(self.device, None, scratch, self.sandbox, build_dir=build)
        for worker in (reference, candidate, eager):  # stopped while any evaluation times (kbench.judge.processes.background)
            BACKGROUND.add(worker)
        return _Pair(reference, candidate, scratch, build, eager)

    def close(self) -> None:
        while self._ready:
            self._ready.popleft().discard()


def _copy_if_absent(source: str, destination: str) -> str:
    """Copy a file of a solution's build cache into a spare's build folder, unless the spare has
    it already: its worker may have compiled a kernel there by then (Triton writes its cache and
    launchers there) and have it loaded; writing over a loaded library crashes the worker.
    Whatever both hold is the same (Triton's cache is keyed by content). Written whole under
    another name first, so that a worker still starting never reads half a file."""
    if not os.path.lexists(destination):
        partial = f"{destination}.{secrets.token_hex(4)}.part"
        shutil.copy2(source, partial)
        os.replace(partial, destination)
    return destination


_scope = threading.local()


@contextmanager
def ahead() -> Iterator[None]:
    """Within it, every sandboxed ``evaluate`` of this thread takes its workers from
    spares kept per device (``current``), and the next ones start; closed on the way out."""
    _scope.spares = {}
    try:
        yield
    finally:
        for spares in _scope.spares.values():
            spares.close()
        _scope.spares = None


def current(device: str, sandbox: Sandbox | None) -> Spares | None:
    """This thread's spares for ``device``, inside ``ahead`` and with a sandbox; else None."""
    kept = getattr(_scope, "spares", None)
    if kept is None or sandbox is None:
        return None
    if device not in kept:
        kept[device] = Spares(device, sandbox)
    return kept[device]


def start_ahead(device: str) -> None:
    """Start this thread's spares for ``device`` (sandboxed, as a default ``evaluate``'s) before
    its first evaluation asks for them. A device whose first solution is still building would
    otherwise start them inside that evaluation's load: on the H200 the first verdict of a run
    of cold CUDA builds waited 5.2 s for them (docs/measurements/2026-12-02-builds-ahead.md). Best effort: where
    no sandbox works or a worker does not start, the evaluation starts its own and says why."""
    try:
        kept = current(device, find_sandbox())
        if kept is not None:
            kept.prepare()
    except Exception:  # noqa: BLE001 - nothing lost: evaluate starts the workers again, and reports its failure
        pass


@contextmanager
def for_pairs(spares: Spares | None, device: str, sandbox: Sandbox | None, pairs: int) -> Iterator[Spares | None]:
    """The spares an evaluation of up to ``pairs`` worker pairs (kbench.judge.protocol.pairs) takes its
    workers from: ``spares`` where it has some (a batch's); else, for more than one pair and with a
    sandbox, its own started ahead, so that later pairs' workers start during the pairs before, as in
    a batch, rather than in their own ``load``. On the H200 a pair's start took 2.8 s of its ``load``
    without them, 0.9 s with one pair ahead (it starts only while nothing is timed: one pair's
    untimed part is too short, docs/timing.md); as many ahead as a batch keeps (PAIRS_AHEAD), no more
    than the later pairs can take; those left over closed after."""
    if spares is not None or sandbox is None or pairs < 2:
        yield spares
        return
    own = Spares(device, sandbox, depth=min(PAIRS_AHEAD, pairs - 1))
    try:
        yield own
    finally:
        own.close()


@contextmanager
def evaluation_workers(spares: Spares | None, device: str, solution_sha256: str, sandbox: Sandbox | None,
                       memory_limit_bytes: int | None) -> Iterator[tuple[Worker, Worker, Path, Worker | None]]:
    """An evaluation's reference and candidate workers, the candidate's scratch folder and a
    worker started for eager's timing (None: none ready), from ``spares`` where there are some,
    else started now; closed after."""
    if spares is not None:
        taken = spares.take(solution_sha256, memory_limit_bytes)
        try:
            yield taken.reference, taken.candidate, taken.scratch, taken.eager
        finally:
            taken.finish()
        return
    with tempfile.TemporaryDirectory(prefix="kbench-", dir=scratch_root()) as tmp:
        reference = Worker(worker_env(device))  # the problem's own needs: the default limit
        candidate = candidate_worker(device, solution_sha256, Path(tmp), sandbox, memory_limit_bytes)
        try:
            yield reference, candidate, Path(tmp), None
        finally:
            close_all([candidate, reference])
