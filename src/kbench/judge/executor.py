"""Many evaluations at once: one timed evaluation per device at a time, on every device
given, with builds ahead of them on the CPUs.

A timed evaluation owns its GPU (two on one GPU would slow each other's calls and
make both timings wrong), so the unit of parallelism is the device: one thread per
device takes the next job, judges it there and hands the result back as it
finishes. Builds are CPU work: a pool imports the solutions ahead (``build``, in
sandboxed workers of their own), so that the content-keyed build cache is warm
when a device reaches them. The calling thread receives every result, so it can
be the only writer of a store.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import torch

from kbench.core.solution import Solution
from kbench.core.verdict import Verdict
from kbench.judge.builds import build
from kbench.judge.devices import resolve_device
from kbench.judge.evaluation import evaluate
from kbench.suite.problem import Problem

Item = TypeVar("Item")
Result = TypeVar("Result")
POLL_SECONDS = 0.2  # how often a waiting caller looks up, so that Ctrl-C is seen promptly


def local_devices() -> list[str]:
    """Every local GPU, else the CPU."""
    return [f"cuda:{i}" for i in range(torch.cuda.device_count())] or ["cpu"]


class LocalExecutor:
    """Runs jobs on ``devices`` (each resolved and checked), one at a time per device,
    with ``build_jobs`` threads building ahead (none: each evaluation builds its own)."""

    def __init__(self, devices: Sequence[str] | None = None, build_jobs: int = 0):
        self.devices = [resolve_device(d) for d in (devices or local_devices())]
        if len(set(self.devices)) != len(self.devices) and self.devices[0] != "cpu":
            raise ValueError(f"devices {self.devices}: a GPU named twice would time two evaluations at once")
        self.build_jobs = build_jobs

    def map(self, items: Sequence[Item], run: Callable[[Item, str], Result],
            prebuild: Callable[[Item], Any] | None = None) -> Iterator[tuple[int, Result]]:
        """``(index in items, run(item, device))`` for every item, as each finishes. An
        exception in a job is raised here, in the caller's thread; jobs not started yet are
        dropped, and the ones running finish in their threads."""
        todo: queue.Queue[tuple[int, Item]] = queue.Queue()
        for index, item in enumerate(items):
            todo.put((index, item))
        finished: queue.Queue[tuple[int, Result | BaseException]] = queue.Queue()
        stop = threading.Event()

        def work(device: str) -> None:
            while not stop.is_set():
                try:
                    index, item = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    finished.put((index, run(item, device)))
                except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
                    finished.put((index, exc))

        builds = ThreadPoolExecutor(self.build_jobs, "kbench-build") if prebuild and self.build_jobs else None
        try:
            if builds is not None:
                for item in items:
                    builds.submit(prebuild, item)
            for device in self.devices:
                threading.Thread(target=work, args=(device,), daemon=True, name=f"kbench-{device}").start()
            for _ in range(len(items)):
                index, result = _next(finished)
                if isinstance(result, BaseException):
                    raise result
                yield index, result
        finally:
            stop.set()
            if builds is not None:
                builds.shutdown(wait=False, cancel_futures=True)


def _next(finished: queue.Queue) -> Any:
    while True:
        try:
            return finished.get(timeout=POLL_SECONDS)
        except queue.Empty:
            continue


def evaluate_many(
    pairs: Iterable[tuple[Problem | str | Path, Solution | str | Path]],
    devices: Sequence[str] | None = None,
    *,
    build_jobs: int = 0,
    **options: Any,
) -> Iterator[tuple[int, Verdict]]:
    """Judge every ``(problem, solution)`` pair, as ``evaluate`` would with ``options``;
    yields ``(index in pairs, verdict)`` as each finishes. ``devices``: one evaluation
    at a time on each (default: every local GPU, else the CPU); ``build_jobs``: threads
    importing the solutions ahead, so that compiled extensions are built on the CPUs
    while the devices measure. For reward loops and batch scoring."""
    executor = LocalExecutor(devices, build_jobs)
    sandbox = options.get("sandbox", True)
    yield from executor.map(
        list(pairs),
        lambda pair, device: evaluate(pair[0], pair[1], device, **options),
        lambda pair: build(pair[1], executor.devices[0], sandbox=sandbox),
    )
