"""The KernelBench-compatible figures of a run: its scores with a correct sample counted only where
KernelBench's criterion accepts it too.

kbench judges floating-point outputs against the float64 truth by default (docs/correctness.md): an honest
kernel whose summation order differs from the reference's passes there and may fail KernelBench's
tolerance against the reference's float32 output. Every verdict records whether that criterion
accepts it (``kernelbench_correct``); here a sample it does not accept counts as incorrect, and the
run is scored again the ordinary way (runs.score: same denominators, bootstrap and seed), so that
the correctness rate and fast_p compare with KernelBench's published ones. A verdict from before
the truth criterion counts as it was judged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kbench.runs.score import ALL, ProblemOutcome, Score, score

# What the KernelBench-compatible figures keep of each group's scores.
KEYS = ("correct_rate", "correct_rate_ci", "fast_p", "fast_p_ci")


def kernelbench_outcomes(problems: list[ProblemOutcome]) -> list[ProblemOutcome]:
    """The outcomes with every correct sample KernelBench's criterion rejects made ``incorrect``."""
    return [replace(problem, samples=tuple(
        sample if sample.kernelbench or not sample.correct else replace(sample, status="incorrect")
        for sample in problem.samples)) for problem in problems]


def kernelbench_score(problems: list[ProblemOutcome], like: Score) -> Score:
    """The run scored again on ``kernelbench_outcomes``, with ``like``'s columns, resamples and seed."""
    return score(kernelbench_outcomes(problems), like.columns, resamples=like.resamples, seed=like.seed,
                 confidence=like.confidence)


def kernelbench_figures(problems: list[ProblemOutcome], like: Score) -> dict[str, Any]:
    """The JSON of ``score --json``'s ``kernelbench_compatible``: the whole selection's correctness rate
    and fast_p with their intervals, and each level's under ``levels``."""
    document = kernelbench_score(problems, like).to_dict()
    levels = {key: {k: figures[k] for k in KEYS} for key, figures in document["levels"].items() if key != ALL}
    return {**{k: document[k] for k in KEYS}, "levels": levels}
