"""How many timing rounds an evaluation takes, and each round's share of the time (docs/timing.md).

The candidate and the baseline columns alternate for ``TimingSettings.rounds``
rounds; with ``max_rounds``, further rounds follow until the measured columns
settle (kbench.judge.protocol.repeatability.columns_settled). Those further rounds are
the judge's own choice, so running out of time in them is no fault of the
candidate: the rounds end with what they measured, and only the rounds the
settings require can end in a ``timeout`` verdict.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from kbench.judge.protocol.repeatability import columns_settled
from kbench.judge.protocol.timing import TimingSettings


@dataclass
class RoundPlan:
    settings: TimingSettings
    deadline: float  # time.monotonic() by which the timed calls must be done
    device: str
    decide_at: dict[str, float] | None = None  # Sides.decide_at
    started: list[float] = field(default_factory=list)  # each round's start

    @property
    def most(self) -> int:
        return max(1, self.settings.rounds, self.settings.max_rounds)

    def label(self, index: int) -> str:
        """How a progress display names round ``index``: of how many, or of at most how many."""
        bound = "at most " if self.most > self.settings.rounds else ""
        return f"round {index + 1} of {bound}{self.most}"

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def start(self, index: int) -> float:
        """Round ``index`` starts now: the candidate's seconds in it, its share of
        ``budget_seconds`` over the required rounds, no more than the time left spread
        over every round that may follow."""
        self.started.append(time.monotonic())
        share = self.settings.budget_seconds / max(1, self.settings.rounds)
        return min(share, self.left() / (self.most - index))

    def round_settings(self, index: int) -> TimingSettings:
        """Round ``index``'s protocol: its seconds (``start``), and ``warmup_seconds`` in the first
        round only. A later round follows the baselines' round on the same device, whose clocks are
        up; what is the candidate's own to warm after its pause (caches, lazy state) is what
        ``warmup_calls`` warms, as in every round. A warm-up of 0.1 s a side was 0.2 s of the 0.47 s
        a round cost at the 0.5% target on the H200 (docs/measurements/2026-12-03-worker-pairs.md)."""
        warmup_seconds = self.settings.warmup_seconds if index == 0 else 0.0
        return replace(self.settings, budget_seconds=self.start(index), warmup_seconds=warmup_seconds)

    def enough(self, candidate_ms: list[float], columns_ms: dict[str, list[float]]) -> bool:
        """After a round (not the last): the columns have settled, or, past the required
        rounds, another round as long as this one would not end before the deadline."""
        if columns_settled(candidate_ms, columns_ms, self.settings, self.decide_at, self.device):
            return True
        done = len(self.started)
        return done >= self.settings.rounds and time.monotonic() - self.started[-1] > self.left()
