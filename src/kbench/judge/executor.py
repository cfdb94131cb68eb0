"""Many evaluations at once: one timed evaluation per device at a time, on every device
given, with builds ahead of them on the CPUs.

A timed evaluation owns its GPU (two on one GPU would slow each other's calls and
make both timings wrong), so the unit of parallelism is the device: one thread per
device takes the next job, judges it there and hands the result back as it
finishes. Builds are CPU work: a pool imports the solutions ahead (``build``, in
sandboxed workers of their own), so that the content-keyed build cache is warm
when a device reaches them. A job goes to the devices when it is ready: at once
where it needs no build (Triton, plain PyTorch: ``needs_build``), else when its
build ends, in the order builds end; builds run in the items' order (``BuildsAhead``),
until the first ends no more at once than the CPUs run without slowing each other
(``build_slots``), so that the first end early rather than all together, and then
more, as the device's timing pauses them (docs/judge.md "Builds ahead"). The
calling thread receives every result, so it can be the only writer of a store.

``Executor`` is what both executors offer: ``LocalExecutor`` here (this machine's
devices, threads) and ``RayExecutor`` (kbench.judge.ray_executor: Ray tasks, one GPU
each, on a local Ray instance or a cluster); ``make_executor`` picks one by name.
"""

from __future__ import annotations

import contextlib
import inspect
import queue
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar

import torch

from kbench.core.solution import Solution
from kbench.core.verdict import Verdict
from kbench.judge.processes import spares
from kbench.judge.builds.ahead import BuildsAhead, available_cpus, build, build_slots, needs_build
from kbench.judge.processes.devices import resolve_device
from kbench.judge.evaluation import evaluate
from kbench.suite import find_problem
from kbench.suite.problem import Problem

Item = TypeVar("Item")
Result = TypeVar("Result")
POLL_SECONDS = 0.2  # how often a waiting caller looks up, so that Ctrl-C is seen promptly
EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs many jobs, each on a device it chooses, and hands each result back to the
    calling thread as it finishes (so that thread can be a store's only writer)."""

    def map(self, items: Sequence[Item], run: Callable[[Item, str], Result],
            prebuild: Callable[[Item, str], Any] | None = None,
            needs_build: Callable[[Item], bool] | None = None) -> Iterator[tuple[int, Result]]:
        """``(index in items, run(item, device))`` for every item, as each finishes;
        ``prebuild(item, device)`` ahead of it where the executor builds ahead and
        ``needs_build(item)`` (None: every item) says it is worth it. A job's
        exception is raised in the caller's thread."""
        ...

    def describe(self) -> dict[str, Any]:
        """What a run's manifest records of how it was judged (plain JSON values)."""
        ...


def local_devices() -> list[str]:
    """Every local GPU, else the CPU."""
    return [f"cuda:{i}" for i in range(torch.cuda.device_count())] or ["cpu"]


def default_build_jobs(devices: Sequence[str], cpus: int | None = None) -> int:
    """The builds ahead when none are asked for: on GPUs, as many as the CPUs beside the devices'
    evaluations keep going (``build_slots`` once judging: 10 on 16 CPUs with one GPU, at least 1),
    so that a device judges from the first build that ends instead of waiting, evaluation after
    evaluation, for each one's own cold build (55 s each on the H200); builds are stopped while
    anything is timed (kbench.judge.processes.background), so they never load the machine a timing runs
    on. None on the CPU: there the evaluations' own trials and checks run on the cores a build
    would take."""
    if not devices or not all(device.startswith("cuda") for device in devices):
        return 0
    cpus = cpus or available_cpus()
    return build_slots(cpus, len(devices), cpus, judging=True)


class LocalExecutor:
    """Runs jobs on ``devices`` (each resolved and checked), one at a time per device,
    with up to ``build_jobs`` threads building ahead (None: ``default_build_jobs``; 0: none,
    each evaluation builds its own; fewer where the CPUs are too few, ``build_slots``).
    With ``ahead`` (by default on GPUs), each device's next evaluation's workers start
    during the ones before (kbench.judge.processes.spares): on the H200 a warm level-1 evaluation
    takes 3.4 s at the median instead of 5.6 s (docs/measurements/2026-11-29-judge-wall-time-and-scaling.md). Not by
    default on the
    CPU, where their start competes with the evaluation's own work for the same cores."""

    def __init__(self, devices: Sequence[str] | None = None, build_jobs: int | None = 0,
                 ahead: bool | None = None):
        self.devices = [resolve_device(d) for d in (devices or local_devices())]
        if len(set(self.devices)) != len(self.devices) and self.devices[0] != "cpu":
            raise ValueError(f"devices {self.devices}: a GPU named twice would time two evaluations at once")
        self.build_jobs = default_build_jobs(self.devices) if build_jobs is None else build_jobs
        self.ahead = all(d.startswith("cuda") for d in self.devices) if ahead is None else ahead

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "devices": list(self.devices), "build_jobs": self.build_jobs,
                "build_slots": build_slots(self.build_jobs, len(self.devices)),
                "build_slots_judging": build_slots(self.build_jobs, len(self.devices), judging=True), "ahead": self.ahead}

    def threads(self, run: Callable[[Item, str], Result], results: queue.Queue) -> DeviceThreads:
        """A thread per device running ``run(job, device)`` for the jobs submitted, one
        at a time on each (with spares where ``ahead``); for callers that hand out
        work as it comes (a model's run) rather than a list."""
        return DeviceThreads(self.devices, self.ahead, run, results)

    def map(self, items: Sequence[Item], run: Callable[[Item, str], Result],
            prebuild: Callable[[Item, str], Any] | None = None,
            needs_build: Callable[[Item], bool] | None = None) -> Iterator[tuple[int, Result]]:
        """``(index in items, run(item, device))`` for every item, as each finishes. With
        ``prebuild`` and ``build_jobs``, the items ``needs_build`` names (None: all) are
        built ahead in the items' order (``BuildsAhead``), and each goes to the
        devices when its build ends (failed or not: its evaluation reports the failure);
        the others go at once. An exception in a job is raised here, in the caller's
        thread; jobs not started yet are dropped, and the ones running finish in their
        threads (a build running finishes in its process, and its job is dropped)."""
        finished: queue.Queue[tuple[tuple[int, Item], Result | BaseException]] = queue.Queue()
        threads = self.threads(lambda job, device: run(job[1], device), finished)
        first = build_slots(self.build_jobs, len(self.devices)) if prebuild else 0
        builds = BuildsAhead(lambda job: prebuild(job[1], self.devices[0]), threads.submit, first,
                             build_slots(self.build_jobs, len(self.devices), judging=True)) if first else None
        try:
            to_build = {i for i, item in enumerate(items)
                        if builds is not None and (needs_build is None or needs_build(item))}
            for job in enumerate(items):
                if job[0] not in to_build:
                    threads.submit(job)
            for job in enumerate(items):
                if job[0] in to_build:
                    builds.add(job)
            for _ in range(len(items)):
                (index, _), result = next_result(finished)
                yield index, threads.received(result)
        finally:
            threads.close()
            if builds is not None:
                builds.close()


class DeviceThreads:
    """A daemon thread per device (a device named twice, the CPU say, gets two), each
    running one job at a time, inside ``spares.ahead`` where ``ahead``: ``submit``
    queues a job for the first free thread, and ``(job, result or exception)`` comes
    back on ``results`` as each finishes, for the caller to pass to ``received``, which
    raises the exception (an interruption included) in the caller's thread. ``submit``
    may be called from other threads (a build's end); after ``close`` it drops the job."""

    _STOP = object()

    def __init__(self, devices: Sequence[str], ahead: bool, run: Callable[[Any, str], Any], results: queue.Queue):
        self.devices, self.ahead, self.run, self.results = list(devices), ahead, run, results
        self.in_flight = 0
        self._lock = threading.Lock()
        self._closed = False
        self._todo: queue.Queue = queue.Queue()
        for index, device in enumerate(self.devices):
            threading.Thread(target=self._work, args=(device,), daemon=True, name=f"kbench-{index}-{device}").start()

    @property
    def idle(self) -> int:
        """Threads with nothing to do (jobs submitted beyond them wait their turn)."""
        return max(0, len(self.devices) - self.in_flight)

    def submit(self, job: Any) -> None:
        with self._lock:
            if self._closed:
                return
            self.in_flight += 1
            self._todo.put(job)

    def received(self, result: Any) -> Any:
        with self._lock:
            self.in_flight -= 1
        if isinstance(result, BaseException):
            raise result
        return result

    def _work(self, device: str) -> None:
        with spares.ahead() if self.ahead else contextlib.nullcontext():
            if self.ahead:
                spares.start_ahead(device)
            while (job := self._todo.get()) is not self._STOP:
                try:
                    result = self.run(job, device)
                except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread (received)
                    result = exc
                self.results.put((job, result))

    def close(self) -> None:
        """Jobs not started are dropped, and any submitted later; the running ones finish in their threads."""
        with self._lock:
            self._closed = True
            with contextlib.suppress(queue.Empty):
                while True:
                    self._todo.get_nowait()
            for _ in self.devices:
                self._todo.put(self._STOP)


def next_result(finished: queue.Queue) -> Any:
    """The next item on ``finished``, waiting in short steps so that Ctrl-C is seen promptly."""
    while True:
        try:
            return finished.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue


def make_executor(executor: str | Executor = "local", devices: Sequence[str] | None = None,
                  build_jobs: int | None = None, address: str | None = None, sandbox: bool = True) -> Executor:
    """An executor by name: ``local`` on ``devices`` (default: every local GPU, else the
    CPU; spare workers ahead on GPUs, unless the evaluations run without ``sandbox``, where
    spares are never taken), or ``ray`` (joining the cluster at ``address``, else starting a local Ray
    instance), where ``devices`` only says the kind (cpu or cuda: Ray picks the GPUs).
    An executor already made is returned as it is."""
    if not isinstance(executor, str):
        if devices or build_jobs or address:
            raise ValueError("devices, build_jobs and address are the executor's own: give them when making it")
        return executor
    if executor == "local":
        if address is not None:
            raise ValueError("an address is for the ray executor")
        return LocalExecutor(devices, build_jobs, ahead=None if sandbox else False)
    if executor == "ray":
        from kbench.judge.ray_executor import RayExecutor

        kinds = {"cpu" if d == "cpu" else "cuda" for d in devices or ()}
        if len(kinds) > 1:
            raise ValueError(f"devices {list(devices or ())}: the ray executor takes one kind, cpu or cuda")
        return RayExecutor(address, device=kinds.pop() if kinds else None, build_jobs=build_jobs or 0)
    raise ValueError(f"executor {executor!r}: choose from {', '.join(EXECUTORS)}")


def evaluate_many(
    pairs: Iterable[tuple[Problem | str | Path, Solution | str | Path]],
    devices: Sequence[str] | str | None = None,
    *,
    device: str | None = None,
    build_jobs: int | None = None,
    executor: str | Executor = "local",
    address: str | None = None,
    **options: Any,
) -> Iterator[tuple[int, Verdict]]:
    """Judge every ``(problem, solution)`` pair, as ``evaluate`` would with ``options``;
    yields ``(index in pairs, verdict)`` as each finishes. ``executor``: ``local`` (one
    evaluation at a time on each of ``devices``, default every local GPU, else the CPU;
    ``device="cuda:0"`` is ``devices=["cuda:0"]``), ``ray`` (Ray tasks holding one GPU
    each, on the cluster at ``address`` or a local Ray instance; ``devices`` then only
    says cpu or cuda) or an executor made beforehand (``LocalExecutor``, ``RayExecutor``);
    ``build_jobs``: builds running ahead, so that compiled extensions are built on the
    CPUs while the devices measure (None: ``default_build_jobs``, on GPUs what the CPUs
    take; 0: none). For reward loops and batch scoring.

    Everything is checked here, at the call, before anything runs: an option ``evaluate``
    does not take is a TypeError, a device or executor that does not exist a ValueError,
    and the pairs are read (a missing file is a SolutionError or ProblemError), so that
    every task carries its sources."""
    if device is not None:
        if devices is not None:
            raise TypeError("evaluate_many() takes devices=[...] or device=..., not both")
        devices = [device]
    elif isinstance(devices, str):
        devices = [devices]
    unknown = sorted(set(options) - EVALUATE_OPTIONS)
    if unknown:
        raise TypeError(f"evaluate_many() got options that evaluate() does not take: {', '.join(unknown)}")
    jobs = [(_problem(problem), _solution(solution)) for problem, solution in pairs]
    chosen = make_executor(executor, devices, build_jobs, address, sandbox=options.get("sandbox", True))
    return _evaluated(chosen, jobs, options)


# The options evaluate_many hands to evaluate: all but what it passes itself for each pair.
EVALUATE_OPTIONS = frozenset(inspect.signature(evaluate).parameters) - {"problem", "solution", "device"}


def _evaluated(chosen: Executor, jobs: list[tuple[Problem, Solution]], options: dict[str, Any]
               ) -> Iterator[tuple[int, Verdict]]:
    sandbox = options.get("sandbox", True)
    yield from chosen.map(
        jobs,
        lambda pair, device: evaluate(pair[0], pair[1], device, **options),
        lambda pair, device: build(pair[1], device, sandbox=sandbox, problem=pair[0], size=options.get("size", "auto"),
                                   dtype=options.get("dtype", "float32")),
        lambda pair: needs_build(pair[1].source),
    )


def _problem(problem: Problem | str | Path) -> Problem:
    return problem if isinstance(problem, Problem) else find_problem(problem)


def _solution(solution: Solution | str | Path) -> Solution:
    return solution if isinstance(solution, Solution) else Solution.from_file(solution)
