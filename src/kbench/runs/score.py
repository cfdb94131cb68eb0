"""Scores of a run; pure functions over stored records (two runs side by side: runs.comparison).

Every problem of a run's selection is in every denominator: a missing
solution, a failure of any kind, and a sample not evaluated yet (``pending``)
all count as not correct. A problem with several samples contributes the
share of its samples that succeed, which is the chance that one sample drawn
at random succeeds (fast_p@1); fast_p@k uses the unbiased estimator of Chen et
al. (2021). Intervals are percentile bootstraps over problems (the unit that
was sampled from the space of possible problems), deterministic given a seed.
docs/scores.md gives the formulas.

Beside every headline figure, which counts every correct solution, the "kernels
only" figures count only the correct solutions with no style flag (the guard's
style rules: PyTorch, a compiler or lower precision doing part of the work,
flagged rather than rejected under the default policy; docs/guard.md).

A generated run with refinement turns is also scored by turn: the outcome of
a sample after turn t is its best judged turn so far (``best_turn``), as an
agent that keeps its best-judged solution would answer (docs/agent.md).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from kbench.judge.guard import style_rules
from kbench.runs.records import RETRIED_STATUSES, RunData, TurnRecord

P_VALUES = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
K_VALUES = (1, 2, 5, 10, 20, 50, 100)
CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
PENDING = "pending"
ALL = "all"
# A CPU run's speedups mean nothing (Triton through its interpreter: one sigmoid 0.0017x to 0.18x): the mark
# every speedup measured on a CPU carries, wherever it is shown (score, compare, report, and JSON: cpu_note).
CPU_MARK = "not meaningful on a CPU"
CPU_NOTE = (f"{CPU_MARK}: these speedups were timed on a CPU, where Triton kernels run through Triton's "
            "interpreter, and say nothing about a GPU kernel's speed")


def cpu_note(*devices: str | None) -> str | None:
    """``CPU_NOTE`` where any of ``devices`` (the runs') is the CPU, else None."""
    return CPU_NOTE if "cpu" in devices else None


@dataclass(frozen=True)
class SampleOutcome:
    status: str
    speedup: dict[str, float | None]
    speedup_low: dict[str, float | None] = field(default_factory=dict)  # the interval's lower bound, per column
    style: tuple[str, ...] = ()  # the style rules its verdict flags (kbench.judge.guard.STYLE)
    solution_sha256: str = ""  # what was judged ("" where unknown): a flip of the same solution is the judge's
    # The repository track (runs.repo_score): the expert's speedup its verdict names, and the patch's
    # fraction of it with the fraction interval's lower bound (the expert timed beside: kbench.repo.expert).
    expert: float | None = None
    fraction: float | None = None
    fraction_low: float | None = None
    kernelbench: bool = True  # correct by KernelBench's criterion too (runs.kernelbench_score)

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    @property
    def kernel_correct(self) -> bool:
        """Correct with no style flag: the solution's own kernels did the work."""
        return self.correct and not self.style

    def kernel_fast(self, column: str, p: float) -> bool:
        return self.kernel_correct and self.fast(column, p)

    def fast(self, column: str, p: float) -> bool:
        """Correct and faster than the baseline by more than a factor ``p``."""
        speedup = self.speedup.get(column)
        return self.correct and speedup is not None and speedup > p

    def surely_fast(self, column: str, p: float) -> bool:
        """Correct, and faster than the baseline by more than ``p`` even at its interval's lower bound."""
        low = self.speedup_low.get(column)
        return self.correct and low is not None and low > p

    @classmethod
    def of(cls, status: str, speedup: dict[str, float | None], verdict: dict | None,
           solution_sha256: str = "") -> "SampleOutcome":
        intervals = (verdict or {}).get("speedup_interval") or {}
        expert = (verdict or {}).get("expert") or {}
        # A speedup or bound that is no finite positive number (a stored inf from a time of 0 ms, a NaN)
        # is no speedup: never fast, never in a geometric mean (issue 57).
        lows = {column: _number(bounds[0]) if isinstance(bounds, list) and bounds else None
                for column, bounds in intervals.items()} if isinstance(intervals, dict) else {}
        return cls(status, {column: _number(value) for column, value in speedup.items()}, lows,
                   style_rules((verdict or {}).get("flags")), solution_sha256, _number(expert.get("speedup")),
                   _number(expert.get("fraction")), _number((expert.get("fraction_interval") or [None])[0]),
                   (verdict or {}).get("kernelbench_correct") is not False)


def _number(value: Any) -> float | None:
    """A finite positive number from a stored verdict, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return float(value)
    return None


@dataclass(frozen=True)
class ProblemOutcome:
    """A problem's samples as they stand; a problem without a solution has one ``missing`` sample."""

    problem_id: str
    level: int | None
    sha256: str
    samples: tuple[SampleOutcome, ...]
    has_solution: bool

    @property
    def evaluated(self) -> bool:
        return all(s.status != PENDING for s in self.samples)


@dataclass(frozen=True)
class Estimate:
    """A point estimate and its bootstrap interval (None where undefined)."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Coverage:
    problems: int
    with_solution: int
    evaluated: int
    samples: int
    samples_evaluated: int


@dataclass(frozen=True)
class GroupScore:
    """The scores of one group of problems (the whole selection, or one level)."""

    n_problems: int
    coverage: Coverage
    correct_rate: Estimate
    fast_p: dict[str, dict[float, Estimate]]
    fast_p_conservative: dict[str, dict[float, Estimate]]  # counting only intervals whose lower bound exceeds p
    geomean_speedup: dict[str, Estimate]
    # "kernels only": counting only the correct samples with no style flag
    correct_rate_kernels_only: Estimate
    fast_p_kernels_only: dict[str, dict[float, Estimate]]
    fast_p_at_k: dict[str, dict[int, dict[float, Estimate]]]
    statuses: dict[str, int]

    @property
    def failures(self) -> dict[str, int]:
        return {status: n for status, n in self.statuses.items() if status != "correct"}


@dataclass(frozen=True)
class Score:
    columns: tuple[str, ...]
    ks: tuple[int, ...]
    groups: dict[str, GroupScore]
    resamples: int
    seed: int
    confidence: float
    cpu_note: str | None = None  # CPU_NOTE for a run timed on a CPU: its speedups mean nothing

    @property
    def overall(self) -> GroupScore:
        return self.groups[ALL]

    def to_dict(self) -> dict:
        """The JSON shape: the whole selection's figures at the top, each level's under ``levels``."""
        return {
            "cpu_note": self.cpu_note,
            "columns": list(self.columns),
            **_group_dict(self.overall),
            "levels": {key: _group_dict(group) for key, group in self.groups.items() if key != ALL},
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence},
        }


def outcomes(data: RunData) -> list[ProblemOutcome]:
    """Each problem of the run with the outcome of each of its samples so far."""
    done = {(e.problem_id, e.sample_index): e for e in data.evaluations}
    indexes: dict[str, list[int]] = {}
    solutions: dict[tuple[str, int], str] = {}
    for sample in data.samples:
        indexes.setdefault(sample.problem_id, []).append(sample.index)
        solutions[(sample.problem_id, sample.index)] = sample.sha256
    result = []
    for problem in data.problems:
        has_solution = problem.problem_id in indexes
        samples = []
        for index in indexes.get(problem.problem_id, [0]):
            record = done.get((problem.problem_id, index))
            sha256 = solutions.get((problem.problem_id, index), "")
            samples.append(
                SampleOutcome.of(record.status, record.speedup, record.verdict, sha256) if record
                else SampleOutcome(PENDING, {}, solution_sha256=sha256)
            )
        result.append(ProblemOutcome(problem.problem_id, problem.level, problem.sha256, tuple(samples), has_solution))
    return result


def best_turn(turns: Sequence[TurnRecord], column: str | None) -> TurnRecord:
    """The turn that stands for a sample after ``turns``: the correct one with the highest
    speedup over ``column`` (the earliest among equals); with none correct, the last."""
    correct = [t for t in turns if t.status == "correct"]
    if not correct:
        return max(turns, key=lambda t: t.turn)

    def rank(t: TurnRecord) -> tuple[float, int]:
        speedup = t.speedup.get(column) if column else None
        return (speedup if speedup is not None else -math.inf, -t.turn)

    return max(correct, key=rank)


def turn_outcome(turns: Sequence[TurnRecord], turn: int, column: str | None) -> SampleOutcome:
    """A sample's outcome after ``turn``: its best turn so far once turns 1..turn are all
    judged; a status to retry if one of them has one; pending otherwise."""
    upto = [t for t in turns if t.turn <= turn]
    retried = [t for t in upto if t.status in RETRIED_STATUSES]
    if retried:
        return SampleOutcome(retried[0].status, {})
    final = {t.turn: t for t in upto if t.final}
    if any(n not in final for n in range(1, turn + 1)):
        return SampleOutcome(PENDING, {})
    best = best_turn(list(final.values()), column)
    return SampleOutcome.of(best.status, best.speedup, best.verdict, best.sha256 or "")  # type: ignore[arg-type]


def outcomes_by_turn(data: RunData) -> dict[int, list[ProblemOutcome]]:
    """For a run with refinement turns: turn t -> every problem with its samples' outcomes
    after turn t (empty for replayed files)."""
    if not data.turns:
        return {}
    config = data.run.config
    column = config.baselines[0] if config.baselines else None
    by_sample: dict[tuple[str, int], list[TurnRecord]] = {}
    for record in data.turns:
        by_sample.setdefault((record.problem_id, record.sample_index), []).append(record)
    indexes: dict[str, list[int]] = {}
    for sample in data.samples:
        indexes.setdefault(sample.problem_id, []).append(sample.index)
    result: dict[int, list[ProblemOutcome]] = {}
    for turn in range(1, max(config.turns, max(t.turn for t in data.turns)) + 1):
        result[turn] = [
            ProblemOutcome(
                problem.problem_id,
                problem.level,
                problem.sha256,
                tuple(turn_outcome(by_sample.get((problem.problem_id, i), []), turn, column)
                      for i in indexes.get(problem.problem_id, [0])),
                problem.problem_id in indexes,
            )
            for problem in data.problems
        ]
    return result


def same_solution_flips(data: RunData) -> dict[int, int]:
    """For each turn after the first: the samples whose outcome changed status from the turn
    before while the same solution (sha256) stands for them, e.g. a correct solution sent back
    unchanged after a false rejection. Such a change is the judge's verdict changing on
    identical code, not the model's progress, and the per-turn table says how much of it there is."""
    by_turn = outcomes_by_turn(data)
    flips = {}
    for turn in list(by_turn)[1:]:
        flips[turn] = sum(
            a.status != b.status and bool(a.solution_sha256) and a.solution_sha256 == b.solution_sha256
            for before, after in zip(by_turn[turn - 1], by_turn[turn])
            for a, b in zip(before.samples, after.samples)
        )
    return flips


def score_by_turn(
    data: RunData,
    columns: tuple[str, ...],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> dict[int, Score]:
    """The scores of a run after each refinement turn (fast_p at turn t)."""
    return {
        turn: score(problems, columns, resamples=resamples, seed=seed, confidence=confidence,
                    device=data.run.config.device)
        for turn, problems in outcomes_by_turn(data).items()
    }


def columns_of(data: RunData) -> tuple[str, ...]:
    """The run's baseline columns and any other a verdict carries, in order; none for --no-timing."""
    if not data.run.config.measure_time:
        return ()
    seen = dict.fromkeys(data.run.config.baselines)
    for evaluation in data.evaluations:
        seen.update(dict.fromkeys(evaluation.speedup))
    return tuple(seen)


def unbiased_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k samples, drawn without replacement from n of
    which c succeed, succeeds: 1 - C(n-c, k) / C(n, k)."""
    if c == 0:
        return 0.0
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


class Bootstrap:
    """Percentile intervals from one set of resamples of ``n`` problems (shared by every
    figure of a group, so the figures stay coherent with each other)."""

    def __init__(self, n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 confidence: float = CONFIDENCE):
        self.index = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
        tail = 100 * (1 - confidence) / 2
        self.percentiles = [tail, 100 - tail]

    def mean(self, values: np.ndarray) -> Estimate:
        low, high = np.percentile(values[self.index].mean(axis=1), self.percentiles)
        return Estimate(float(values.mean()), float(low), float(high))

    def geomean(self, logs: np.ndarray) -> Estimate:
        """exp of the mean of the defined (non-NaN) logs, resample by resample."""
        if np.isnan(logs).all():
            return Estimate(None)
        drawn = logs[self.index]
        counts = (~np.isnan(drawn)).sum(axis=1)
        sums = np.nansum(drawn, axis=1)
        means = sums[counts > 0] / counts[counts > 0]
        low, high = np.percentile(np.exp(means), self.percentiles)
        return Estimate(float(np.exp(np.nanmean(logs))), float(low), float(high))


def bootstrap_mean(values: list[float], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = CONFIDENCE) -> Estimate:
    """The mean of per-problem values with its percentile bootstrap interval."""
    return Bootstrap(len(values), resamples, seed, confidence).mean(np.asarray(values, dtype=float))


def score(
    problems: list[ProblemOutcome],
    columns: tuple[str, ...],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    device: str | None = None,
) -> Score:
    """Scores of the whole selection and of each level; ``device``: the run's (for ``cpu_note``)."""
    ks = _k_values(problems)
    groups = {
        key: _score_group(group, columns, ks, Bootstrap(len(group), resamples, seed, confidence))
        for key, group in groups_of(problems).items()
    }
    return Score(tuple(columns), ks, groups, resamples, seed, confidence, cpu_note(device) if columns else None)


def groups_of(problems: list[ProblemOutcome]) -> dict[str, list[ProblemOutcome]]:
    """The whole selection, then each level in order (problems without a level last)."""
    groups: dict[str, list[ProblemOutcome]] = {ALL: list(problems)}
    levels = sorted({p.level for p in problems}, key=lambda level: (level is None, level or 0))
    for level in levels:
        groups["none" if level is None else str(level)] = [p for p in problems if p.level == level]
    return groups


def _k_values(problems: list[ProblemOutcome]) -> tuple[int, ...]:
    """The k for fast_p@k: only when some problem has several samples, and never more
    samples than the problem with fewest has (the estimator needs n >= k)."""
    counts = [len(p.samples) for p in problems if p.has_solution]
    if not counts or max(counts) < 2:
        return ()
    fewest = min(counts)
    return tuple(sorted({k for k in K_VALUES if k <= fewest} | {fewest}))


def correct_share(problem: ProblemOutcome) -> float:
    return sum(s.correct for s in problem.samples) / len(problem.samples)


def fast_share(problem: ProblemOutcome, column: str, p: float) -> float:
    return sum(s.fast(column, p) for s in problem.samples) / len(problem.samples)


def kernel_correct_share(problem: ProblemOutcome) -> float:
    return sum(s.kernel_correct for s in problem.samples) / len(problem.samples)


def kernel_fast_share(problem: ProblemOutcome, column: str, p: float) -> float:
    return sum(s.kernel_fast(column, p) for s in problem.samples) / len(problem.samples)


def surely_fast_share(problem: ProblemOutcome, column: str, p: float) -> float:
    return sum(s.surely_fast(column, p) for s in problem.samples) / len(problem.samples)


def _fast_at_k(problem: ProblemOutcome, column: str, p: float, k: int) -> float:
    return unbiased_at_k(len(problem.samples), sum(s.fast(column, p) for s in problem.samples), k)


def mean_log_speedup(problem: ProblemOutcome, column: str) -> float:
    logs = [math.log(s.speedup[column]) for s in problem.samples if s.fast(column, 0.0)]
    return sum(logs) / len(logs) if logs else math.nan


def per_problem(problems: list[ProblemOutcome], value: Callable[..., float], *args: object) -> np.ndarray:
    return np.array([value(problem, *args) for problem in problems], dtype=float)


def _score_group(
    problems: list[ProblemOutcome], columns: tuple[str, ...], ks: tuple[int, ...], boot: Bootstrap
) -> GroupScore:
    statuses: dict[str, int] = {}
    for problem in problems:
        for sample in problem.samples:
            statuses[sample.status] = statuses.get(sample.status, 0) + 1
    with_solution = [p for p in problems if p.has_solution]
    return GroupScore(
        n_problems=len(problems),
        coverage=Coverage(
            problems=len(problems),
            # a solution to judge: a file, or code a model wrote (not a failed request or a reply without code)
            with_solution=sum(any(s.solution_sha256 for s in p.samples) for p in with_solution),
            evaluated=sum(p.evaluated for p in problems),
            samples=sum(len(p.samples) for p in with_solution),
            samples_evaluated=sum(s.status != PENDING for p in with_solution for s in p.samples),
        ),
        correct_rate=boot.mean(per_problem(problems, correct_share)),
        fast_p={
            column: {p: boot.mean(per_problem(problems, fast_share, column, p)) for p in P_VALUES}
            for column in columns
        },
        fast_p_conservative={
            column: {p: boot.mean(per_problem(problems, surely_fast_share, column, p)) for p in P_VALUES}
            for column in columns
        },
        geomean_speedup={column: boot.geomean(per_problem(problems, mean_log_speedup, column)) for column in columns},
        correct_rate_kernels_only=boot.mean(per_problem(problems, kernel_correct_share)),
        fast_p_kernels_only={
            column: {p: boot.mean(per_problem(problems, kernel_fast_share, column, p)) for p in P_VALUES}
            for column in columns
        },
        fast_p_at_k={
            column: {
                k: {p: boot.mean(per_problem(problems, _fast_at_k, column, p, k)) for p in P_VALUES} for k in ks
            }
            for column in columns
        },
        statuses=dict(sorted(statuses.items(), key=lambda item: -item[1])),
    )


def interval(estimate: Estimate) -> list[float | None]:
    return [estimate.low, estimate.high]


def _group_dict(group: GroupScore) -> dict:
    def by_p(estimates: dict[float, Estimate], part: Callable[[Estimate], object]) -> dict:
        return {format(p, "g"): part(e) for p, e in estimates.items()}

    def value(e: Estimate) -> float | None:
        return e.value

    return {
        "n_problems": group.n_problems,
        "coverage": asdict(group.coverage),
        "correct_rate": group.correct_rate.value,
        "correct_rate_ci": interval(group.correct_rate),
        "fast_p": {column: by_p(e, value) for column, e in group.fast_p.items()},
        "fast_p_ci": {column: by_p(e, interval) for column, e in group.fast_p.items()},
        "fast_p_conservative": {column: by_p(e, value) for column, e in group.fast_p_conservative.items()},
        "fast_p_conservative_ci": {column: by_p(e, interval) for column, e in group.fast_p_conservative.items()},
        "geomean_speedup": {column: e.value for column, e in group.geomean_speedup.items()},
        "geomean_speedup_ci": {column: interval(e) for column, e in group.geomean_speedup.items()},
        "correct_rate_kernels_only": group.correct_rate_kernels_only.value,
        "correct_rate_kernels_only_ci": interval(group.correct_rate_kernels_only),
        "fast_p_kernels_only": {column: by_p(e, value) for column, e in group.fast_p_kernels_only.items()},
        "fast_p_kernels_only_ci": {column: by_p(e, interval) for column, e in group.fast_p_kernels_only.items()},
        "fast_p_at_k": {
            column: {str(k): by_p(e, value) for k, e in by_k.items()} for column, by_k in group.fast_p_at_k.items()
        },
        "fast_p_at_k_ci": {
            column: {str(k): by_p(e, interval) for k, e in by_k.items()} for column, by_k in group.fast_p_at_k.items()
        },
        "failures": group.failures,
    }

