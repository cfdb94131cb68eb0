"""What a model's run hands its judging threads: a turn's solution to judge.

A model's run (kbench.agents.loop) asks for solutions on the request threads
(kbench.agents.pool) and judges them on the executor's device threads
(``LocalExecutor.threads``: one per device given, ``kbench run --model ...
--gpus``, one evaluation at a time on each, with workers started ahead on GPUs):
a thread judges the solution the loop hands it with the run's settings on its
device and puts the record on the loop's queue, so that the store stays the
loop's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kbench.runs.records import SampleRecord


@dataclass(frozen=True)
class Judging:
    """One evaluation for the threads: a turn's solution, or the turn chosen as the
    sample's best, judged ``again`` (its outcome's independent measurement)."""

    sample: Any  # the loop's sample
    turn: int
    solution: SampleRecord
    again: bool = False
