"""Two repository-track runs side by side: the paired difference B - A of the track's figures.

As for problems (runs.comparison), the pairs are the tasks both runs hold with identical
content (the task's hash, which covers its pinned revision), and the bootstrap resamples
tasks with their pairs kept together. Runs of different tracks are never compared
(``comparison.track_difference``); settings that differ are ``comparison.mismatches``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from kbench.runs.comparison import Difference, Flip, same_solution, status_label
from kbench.runs.repo_score import (
    NOT_CLAIMED_ON_CPU,
    COLUMN,
    correct_share,
    effective_speedup,
    faster_share,
    fraction_of_expert,
    solved_share,
)
from kbench.runs.score import CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, Bootstrap, ProblemOutcome, interval

# The figures compared, each a per-task value (NaN where undefined: left out of that figure's pairs).
FIGURES: dict[str, Callable[[ProblemOutcome], float]] = {
    "correct_rate": correct_share,
    "solved": solved_share,
    "faster_than_base": faster_share,
    "mean_fraction_of_expert": fraction_of_expert,
}


@dataclass(frozen=True)
class RepoComparison:
    n_tasks: int
    only_a: list[str]
    only_b: list[str]
    changed: list[str]  # in both runs with different content (left out)
    differences: dict[str, Difference]  # by figure; absent where no pair defines it
    flipped: list[Flip]
    resamples: int
    seed: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "track": "repo",
            "n_tasks": self.n_tasks,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "changed": self.changed,
            **{name: {"a": d.a, "b": d.b, "difference": d.difference.value, "ci": interval(d.difference)}
               for name, d in self.differences.items()},
            "flipped": [flip.to_dict() for flip in self.flipped],
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence},
        }


def compare_repo(
    run_a: list[ProblemOutcome],
    run_b: list[ProblemOutcome],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    cpu: bool = False,
) -> RepoComparison:
    """B - A on the tasks both runs hold with identical content, paired by task; ``cpu`` (either run judged
    on a CPU): no difference of solved or of the fraction of the expert, which mean nothing there."""
    by_id_b = {t.problem_id: t for t in run_b}
    ids_a = {t.problem_id for t in run_a}
    pairs = [(a, by_id_b[a.problem_id]) for a in run_a if a.problem_id in by_id_b]
    changed = [a.problem_id for a, b in pairs if a.sha256 != b.sha256]
    pairs = [(a, b) for a, b in pairs if a.sha256 == b.sha256]
    differences = {}
    for name, value in FIGURES.items():
        if cpu and name in NOT_CLAIMED_ON_CPU:
            continue
        a = np.array([value(t) for t, _ in pairs], dtype=float)
        b = np.array([value(t) for _, t in pairs], dtype=float)
        keep = ~(np.isnan(a) | np.isnan(b))
        if keep.any():
            boot = Bootstrap(int(keep.sum()), resamples, seed, confidence)
            differences[name] = Difference(float(a[keep].mean()), float(b[keep].mean()), boot.mean(b[keep] - a[keep]))
    return RepoComparison(
        n_tasks=len(pairs),
        only_a=[t.problem_id for t in run_a if t.problem_id not in by_id_b],
        only_b=[t.problem_id for t in run_b if t.problem_id not in ids_a],
        changed=changed,
        differences=differences,
        flipped=[_flip(a, b) for a, b in pairs if status_label(a) != status_label(b)],
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )


def _flip(a: ProblemOutcome, b: ProblemOutcome) -> Flip:
    def speedup(task: ProblemOutcome) -> dict[str, float | None]:
        correct = [effective_speedup(s) for s in task.samples if s.correct]
        return {COLUMN: math.exp(sum(map(math.log, correct)) / len(correct)) if correct else None}

    return Flip(a.problem_id, status_label(a), status_label(b), correct_share(a), correct_share(b),
                speedup(a), speedup(b), same_solution(a, b))
