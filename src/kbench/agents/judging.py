"""The threads that judge a model's solutions: one per device, one evaluation at a time on each.

A model's run (kbench.agents.loop) asks for solutions on the request threads
(kbench.agents.pool) and judges them here, on every device it was given
(``kbench run --model ... --gpus``): a device's thread judges the solution the
loop hands it, with the run's settings on that device, and puts the record on
the loop's queue, so that the store stays the loop's own. With ``ahead`` (the
``LocalExecutor``'s choice: on GPUs) each thread's next evaluation's workers
start during the one before (kbench.judge.spares).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable

from kbench.judge import spares
from kbench.runs.records import EvaluationRecord, SampleRecord


@dataclass(frozen=True)
class Judging:
    """One evaluation for the threads: a turn's solution, or the turn chosen as the
    sample's best, judged ``again`` (its outcome's independent measurement)."""

    sample: Any  # the loop's sample
    turn: int
    solution: SampleRecord
    again: bool = False


class JudgeThreads:
    """A daemon thread per device (a device named twice gets two: the CPU, say);
    ``submit`` hands a job to an idle one, whose result comes back on ``results`` as
    ``(job, slot, record or exception)``, to be passed to ``received`` by the loop.
    Anything raised in a thread, an interruption included, is raised there, in the
    loop's thread."""

    def __init__(self, devices: list[str], ahead: bool, results: queue.Queue,
                 judge: Callable[[Judging, str], EvaluationRecord]):
        self.devices, self.ahead, self.results, self.judge = list(devices), ahead, results, judge
        self.idle = list(range(len(devices)))
        self._jobs: list[queue.Queue[Judging | None]] = [queue.Queue() for _ in devices]
        for slot, device in enumerate(devices):
            threading.Thread(target=self._work, args=(slot,), daemon=True, name=f"kbench-judge-{slot}-{device}").start()

    @property
    def busy(self) -> int:
        return len(self.devices) - len(self.idle)

    def submit(self, job: Judging) -> None:
        self._jobs[self.idle.pop(0)].put(job)

    def received(self, job: Judging, slot: int, result: EvaluationRecord | BaseException) -> EvaluationRecord:
        self.idle.append(slot)
        if isinstance(result, BaseException):
            raise result
        return result

    def _work(self, slot: int) -> None:
        device = self.devices[slot]
        with spares.ahead() if self.ahead else contextlib.nullcontext():
            while (job := self._jobs[slot].get()) is not None:
                try:
                    result: EvaluationRecord | BaseException = self.judge(job, device)
                except BaseException as exc:  # noqa: BLE001 - raised in the loop's thread (received)
                    result = exc
                self.results.put((job, slot, result))

    def close(self) -> None:
        for jobs in self._jobs:
            jobs.put(None)
