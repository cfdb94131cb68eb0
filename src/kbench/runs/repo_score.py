"""Scores of a repository-track run (kbench.repo): figures of their own, never mixed with fast_p.

A task is a repository at a pinned revision with an expert's patch; a sample is a
patch, judged by ``kbench.repo.evaluate_patch``, whose verdict carries the speedup
over the base revision (column ``base``, with its interval) and, the expert patch
timed beside it in the same rounds, its fraction of the expert's speedup with that
fraction's interval (``verdict.expert``). Per task, over its samples (docs/repo-runs.md):

- **solved**: the patch is correct and the lower bound of its fraction interval is at
  least ``SOLVED_SHARE`` (0.95, ``kbench.repo.SOLVED_FRACTION``) (GSO's rule, on the
  lower bound so that a lucky measurement does not count; the fraction itself where a
  verdict has no interval, as ``kbench.repo.solved``).
- **faster than base**: correct, and the interval's lower bound exceeds 1.
- **speedup**: a correct patch's measured speedup over base; anything else counts as
  1, the base revision standing (a maintainer merges no failing patch). The geometric
  mean over every task of the run, none left out.
- **fraction of the expert**: a correct patch's fraction of the expert's speedup (the
  verdict's ``expert.fraction``); anything else counts as 0, a failing patch earning
  none of the expert's speedup. The mean over every task.

A correct patch whose verdict names no fraction (judged with the expert not timed
beside) can be neither solved nor given a fraction: its task is left out of the mean
fraction, and ``expert_unknown`` counts such tasks.

On a CPU (a run whose device is the CPU) neither **solved** nor the **fraction of the expert**
is claimed (both None, ``not_meaningful`` naming them in the JSON): the expert's Triton kernels
run through Triton's interpreter there, so any patch not slower than the base "reaches" it
(kbench.repo.expert.NOT_MEANINGFUL_ON_CPU); the speedups over base are CPU times, named too.

Every task is in every denominator, missing and pending patches included, as for
problems; a task with several samples contributes the share (or the mean) over them.
Intervals are the percentile bootstraps over tasks of ``runs.score`` (one set of
resamples per group); groups are the whole run, then each repository.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from kbench.repo.expert import NOT_MEANINGFUL_ON_CPU, SOLVED_FRACTION, on_cpu, solves
from kbench.runs.records import RunData
from kbench.runs.score import (
    ALL,
    CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    PENDING,
    Bootstrap,
    Coverage,
    Estimate,
    ProblemOutcome,
    SampleOutcome,
    correct_share,
    interval,
    outcomes,
    outcomes_by_turn,
    per_problem,
)

TRACK = "repo"
COLUMN = "base"  # the repository track's one speedup column: the base revision's time over the patched one's
SOLVED_SHARE = SOLVED_FRACTION
NOT_CLAIMED_ON_CPU = ("solved", "mean_fraction_of_expert")  # None on a CPU
CPU_TIMES = ("faster_than_base", "geomean_speedup")  # kept, but CPU times


def track_of(data: RunData) -> str:
    """The run's track: ``kernel`` (problems) or ``repo`` (tasks)."""
    return data.run.config.track


def repository_of(task_id: str) -> str:
    """The repository part of a task id (``tinylm`` of ``tinylm/fused-rmsnorm``)."""
    return task_id.split("/", 1)[0] if "/" in task_id else task_id


@dataclass(frozen=True)
class RepoGroupScore:
    """The figures of one group of tasks (the whole run, or one repository)."""

    n_tasks: int
    coverage: Coverage
    correct_rate: Estimate
    solved: Estimate
    faster_than_base: Estimate
    geomean_speedup: Estimate
    mean_fraction_of_expert: Estimate
    expert_unknown: int  # tasks with a correct patch but no expert speedup named: never solved, no fraction
    statuses: dict[str, int]

    @property
    def failures(self) -> dict[str, int]:
        return {status: n for status, n in self.statuses.items() if status != "correct"}


@dataclass(frozen=True)
class RepoScore:
    groups: dict[str, RepoGroupScore]
    resamples: int
    seed: int
    confidence: float
    cpu: bool = False  # judged on a CPU: NOT_CLAIMED_ON_CPU are None

    @property
    def overall(self) -> RepoGroupScore:
        return self.groups[ALL]

    def to_dict(self) -> dict:
        """The JSON shape: the whole run's figures at the top, each repository's under ``repositories``."""
        return {
            "track": TRACK,
            "column": COLUMN,
            "solved_share_of_expert": SOLVED_SHARE,
            **_group_dict(self.overall),
            "repositories": {key: _group_dict(g) for key, g in self.groups.items() if key != ALL},
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence},
            **({"not_meaningful": {"not_claimed": list(NOT_CLAIMED_ON_CPU), "cpu_times": list(CPU_TIMES),
                                   "why": NOT_MEANINGFUL_ON_CPU}} if self.cpu else {}),
        }


def effective_speedup(sample: SampleOutcome) -> float:
    """A correct patch's measured speedup over base; 1 (the base revision standing) for anything else."""
    speedup = sample.speedup.get(COLUMN)
    if sample.correct and speedup is not None and math.isfinite(speedup) and speedup > 0:
        return speedup
    return 1.0


def is_solved(sample: SampleOutcome) -> bool:
    """Correct, and its fraction interval's lower bound (the fraction, without an interval) at least
    SOLVED_SHARE of the expert's speedup."""
    return sample.correct and solves(sample.fraction, sample.fraction_low)


def solved_share(task: ProblemOutcome) -> float:
    return sum(is_solved(s) for s in task.samples) / len(task.samples)


def faster_share(task: ProblemOutcome) -> float:
    return sum(s.surely_fast(COLUMN, 1.0) for s in task.samples) / len(task.samples)


def mean_log_speedup(task: ProblemOutcome) -> float:
    return sum(math.log(effective_speedup(s)) for s in task.samples) / len(task.samples)


def fraction_of_expert(task: ProblemOutcome) -> float:
    """The mean over the task's samples of a correct one's fraction of the expert's speedup, 0 for the
    others; NaN where a correct sample's fraction is unknown."""
    if expert_unknown(task):
        return math.nan
    return sum(s.fraction if s.correct else 0.0 for s in task.samples) / len(task.samples)


def expert_unknown(task: ProblemOutcome) -> bool:
    return any(s.correct and s.fraction is None for s in task.samples)


def nan_mean(boot: Bootstrap, values: np.ndarray) -> Estimate:
    """The mean of the defined (non-NaN) values, with the interval of the same, resample by resample."""
    if np.isnan(values).all():
        return Estimate(None)
    drawn = values[boot.index]
    counts = (~np.isnan(drawn)).sum(axis=1)
    means = np.nansum(drawn, axis=1)[counts > 0] / counts[counts > 0]
    low, high = np.percentile(means, boot.percentiles)
    return Estimate(float(np.nanmean(values)), float(low), float(high))


def repo_score(
    tasks: list[ProblemOutcome],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    cpu: bool = False,
) -> RepoScore:
    """The figures of the whole run and of each repository; ``cpu``: judged on a CPU (module docstring)."""
    groups: dict[str, list[ProblemOutcome]] = {ALL: list(tasks)}
    for task in tasks:
        groups.setdefault(repository_of(task.problem_id), []).append(task)
    if len(groups) == 2:  # one repository: its group is the whole run again
        groups = {ALL: groups[ALL]}
    return RepoScore(
        {key: _score_group(group, Bootstrap(len(group), resamples, seed, confidence), cpu)
         for key, group in groups.items()},
        resamples, seed, confidence, cpu,
    )


def run_on_cpu(data: RunData) -> bool:
    return on_cpu(data.run.config.device)


def repo_run_score(data: RunData, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> RepoScore:
    """A run's figures (``repo_score`` of its outcomes, on a CPU as a CPU run's)."""
    return repo_score(outcomes(data), resamples=resamples, seed=seed, cpu=run_on_cpu(data))


def repo_score_by_turn(
    data: RunData,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> dict[int, RepoScore]:
    """The figures after each refinement turn (a sample's best judged turn so far, as for problems)."""
    return {turn: repo_score(tasks, resamples=resamples, seed=seed, confidence=confidence, cpu=run_on_cpu(data))
            for turn, tasks in outcomes_by_turn(data).items()}


def _score_group(tasks: list[ProblemOutcome], boot: Bootstrap, cpu: bool = False) -> RepoGroupScore:
    statuses: dict[str, int] = {}
    for task in tasks:
        for sample in task.samples:
            statuses[sample.status] = statuses.get(sample.status, 0) + 1
    with_patch = [t for t in tasks if t.has_solution]

    def mean(value: Callable[[ProblemOutcome], float]) -> Estimate:
        return boot.mean(per_problem(tasks, value))

    return RepoGroupScore(
        n_tasks=len(tasks),
        coverage=Coverage(
            problems=len(tasks),
            with_solution=len(with_patch),
            evaluated=sum(t.evaluated for t in tasks),
            samples=sum(len(t.samples) for t in with_patch),
            samples_evaluated=sum(s.status != PENDING for t in with_patch for s in t.samples),
        ),
        correct_rate=mean(correct_share),
        solved=Estimate(None) if cpu else mean(solved_share),
        faster_than_base=mean(faster_share),
        geomean_speedup=boot.geomean(per_problem(tasks, mean_log_speedup)),
        mean_fraction_of_expert=Estimate(None) if cpu else nan_mean(boot, per_problem(tasks, fraction_of_expert)),
        expert_unknown=sum(expert_unknown(t) for t in tasks),
        statuses=dict(sorted(statuses.items(), key=lambda item: -item[1])),
    )


def _group_dict(group: RepoGroupScore) -> dict:
    figures = ("correct_rate", "solved", "faster_than_base", "geomean_speedup", "mean_fraction_of_expert")
    document: dict = {"n_tasks": group.n_tasks, "coverage": asdict(group.coverage)}
    for name in figures:
        estimate = getattr(group, name)
        document[name] = estimate.value
        document[f"{name}_ci"] = interval(estimate)
    return {**document, "expert_unknown": group.expert_unknown, "failures": group.failures}
