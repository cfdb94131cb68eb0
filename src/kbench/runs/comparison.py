"""Two runs side by side: whether they can be compared at all, the paired difference
B - A, and the problems whose status flipped.

Two scores mean something side by side only when everything but the thing
being compared (the model, the agent, the solutions) was the same: the GPU and
its driver, the software, the size and dtype judged (a problem's own variant in
it, or KernelBench's cast of every problem: the precision), the judge's policy and
timing, the baseline columns and how they are measured, and what the model
was asked (prompt templates, sampling, agent). ``mismatches`` lists every such
difference; ``kbench compare`` refuses on any, or shows them above the numbers
with ``--force``.

The paired difference is over the problems both runs hold with identical
content: each problem's value in B minus its value in A, with a bootstrap over
problems that keeps pairs together (docs/scores.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from kbench.runs.manifest import Manifest, RunConfig
from kbench.runs.records import RunData
from kbench.runs.score import (
    ALL,
    CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    P_VALUES,
    Bootstrap,
    Estimate,
    ProblemOutcome,
    correct_share,
    cpu_note,
    fast_share,
    groups_of,
    interval,
    mean_log_speedup,
    per_problem,
)

# What must be equal for two runs' numbers to be comparable, by where it is kept.
CONFIG_FIELDS = ("device", "size", "dtype", "precision", "trials", "timeout", "policy", "cuda_graph", "sandbox",
                 "baselines", "turns", "measure_time")
MANIFEST_FIELDS = ("gpu_name", "gpu_driver", "python", "torch", "triton", "cuda", "cudnn", "global_settings",
                   "timing_protocol", "baseline_settings")
# Of a generated run's settings (agents.loop.AgentConfig); provider, model and endpoint are what is compared.
GENERATION_FIELDS = ("target", "gpu", "sampling", "agent")


@dataclass(frozen=True)
class Mismatch:
    """A setting that differs between the runs (each side: its distinct values over the run's sessions)."""

    name: str
    a: tuple[Any, ...]
    b: tuple[Any, ...]


@dataclass(frozen=True)
class Difference:
    """Run B minus run A on the same problems, with a paired bootstrap interval."""

    a: float
    b: float
    difference: Estimate


@dataclass(frozen=True)
class GroupComparison:
    n_problems: int
    correct_rate: Difference
    fast_p: dict[str, dict[float, Difference]]


@dataclass(frozen=True)
class Flip:
    """A shared problem whose status differs between the runs, with its figures in each."""

    problem_id: str
    status_a: str
    status_b: str
    correct_a: float
    correct_b: float
    speedup_a: dict[str, float | None]  # geometric mean over the correct samples, per column
    speedup_b: dict[str, float | None]
    # Every sample judged the same source on both sides: the flip is the judge's, not the code's.
    same_solution: bool = False

    def speedup_change(self, column: str) -> float | None:
        a, b = self.speedup_a.get(column), self.speedup_b.get(column)
        return None if a is None or b is None else b - a

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem_id,
            "status": {"a": self.status_a, "b": self.status_b},
            "same_solution": self.same_solution,
            "correct": {"a": self.correct_a, "b": self.correct_b, "difference": self.correct_b - self.correct_a},
            "speedup": {
                column: {"a": self.speedup_a.get(column), "b": self.speedup_b.get(column),
                         "difference": self.speedup_change(column)}
                for column in self.speedup_a
            },
        }


@dataclass(frozen=True)
class RunComparison:
    columns: tuple[str, ...]
    only_a: list[str]
    only_b: list[str]
    changed: list[str]
    groups: dict[str, GroupComparison]
    flipped: list[Flip]
    resamples: int
    seed: int
    confidence: float
    cpu_note: str | None = None  # CPU_NOTE where either run was timed on a CPU: its speedups mean nothing

    def to_dict(self) -> dict:
        def group(g: GroupComparison) -> dict:
            return {
                "n_problems": g.n_problems,
                "correct_rate": _difference_dict(g.correct_rate),
                "fast_p": {
                    column: {format(p, "g"): _difference_dict(d) for p, d in by_p.items()}
                    for column, by_p in g.fast_p.items()
                },
            }

        return {
            "cpu_note": self.cpu_note,
            "columns": list(self.columns),
            "only_a": self.only_a,
            "only_b": self.only_b,
            "changed": self.changed,
            **(group(self.groups[ALL]) if ALL in self.groups else {"n_problems": 0}),
            "levels": {key: group(g) for key, g in self.groups.items() if key != ALL},
            "flipped": [flip.to_dict() for flip in self.flipped],
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence},
        }


def track_difference(run_a: RunData, run_b: RunData) -> str | None:
    """Why two runs cannot be compared at all, even with ``--force``: they are of different tracks
    (problems and repository tasks are scored apart, never mixed); None when they are of one."""
    a, b = run_a.run.config.track, run_b.run.config.track
    if a == b:
        return None
    return (f"run {run_a.run.name} is of the {a} track and run {run_b.run.name} of the {b} track: "
            "the tracks are scored apart and never compared")


def mismatches(run_a: RunData, run_b: RunData) -> list[Mismatch]:
    """Every setting that shapes the numbers and differs between the runs."""
    found = []
    for name, value in _settings().items():
        a, b = _values(run_a, value), _values(run_b, value)
        if a != b:
            found.append(Mismatch(name, a, b))
    return found


Reader = Callable[[RunConfig, Manifest | None], Any]


def _settings() -> dict[str, Reader]:
    """Each compared setting: how to read it from a run's config and one session's manifest."""
    settings: dict[str, Reader] = {}
    for name in CONFIG_FIELDS:
        settings[name] = lambda config, manifest, name=name: getattr(config, name)
    for name in MANIFEST_FIELDS:
        settings[name] = lambda config, manifest, name=name: getattr(manifest, name, None)
    settings["sandbox kind"] = lambda config, manifest: manifest.sandbox.get("kind") if manifest else None
    for which, label in (("template", "prompt template"), ("refine_template", "refinement template")):
        settings[label] = lambda config, manifest, which=which: ((config.generation or {}).get(which) or {}).get("sha256")
    for name in GENERATION_FIELDS:
        settings[name] = lambda config, manifest, name=name: (config.generation or {}).get(name)
    return settings


def _values(data: RunData, read: Reader) -> tuple[Any, ...]:
    """A setting's distinct values over the run's sessions (a resumed run may have changed)."""
    distinct: list[Any] = []
    for manifest in [session.manifest for session in data.sessions] or [None]:
        value = read(data.run.config, manifest)
        if value not in distinct:
            distinct.append(value)
    return tuple(distinct)


def compare(
    run_a: list[ProblemOutcome],
    run_b: list[ProblemOutcome],
    columns: tuple[str, ...],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    devices: Sequence[str] = (),
) -> RunComparison:
    """B - A on the problems both runs hold with identical content, paired by problem; ``devices``:
    the runs' (a CPU's speedups carry CPU_NOTE)."""
    by_id_b = {p.problem_id: p for p in run_b}
    ids_a = {p.problem_id for p in run_a}
    pairs = [(a, by_id_b[a.problem_id]) for a in run_a if a.problem_id in by_id_b]
    changed = [a.problem_id for a, b in pairs if a.sha256 != b.sha256]
    pairs = [(a, b) for a, b in pairs if a.sha256 == b.sha256]
    groups: dict[str, list[tuple[ProblemOutcome, ProblemOutcome]]] = {}
    if pairs:
        groups[ALL] = pairs
        for key, group in groups_of([a for a, _ in pairs]).items():
            if key != ALL:
                ids = {p.problem_id for p in group}
                groups[key] = [(a, b) for a, b in pairs if a.problem_id in ids]
    return RunComparison(
        columns=tuple(columns),
        only_a=[p.problem_id for p in run_a if p.problem_id not in by_id_b],
        only_b=[p.problem_id for p in run_b if p.problem_id not in ids_a],
        changed=changed,
        groups={
            key: _compare_group(group, columns, Bootstrap(len(group), resamples, seed, confidence))
            for key, group in groups.items()
        },
        flipped=[flip for a, b in pairs if (flip := _flip(a, b, columns)) is not None],
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        cpu_note=cpu_note(*devices) if columns else None,
    )


def status_label(problem: ProblemOutcome) -> str:
    """A problem's status: its sample's, or how many of its samples are correct."""
    if len(problem.samples) == 1:
        return problem.samples[0].status
    return f"{sum(s.correct for s in problem.samples)}/{len(problem.samples)} correct"


def _flip(a: ProblemOutcome, b: ProblemOutcome, columns: tuple[str, ...]) -> Flip | None:
    if status_label(a) == status_label(b):
        return None
    return Flip(a.problem_id, status_label(a), status_label(b), correct_share(a), correct_share(b),
                _speedups(a, columns), _speedups(b, columns), same_solution(a, b))


def same_solution(a: ProblemOutcome, b: ProblemOutcome) -> bool:
    """Whether both sides judged the same sources, sample by sample (none unknown): then a
    change of status is a change of the judge (a defect, noise, another policy), not of the code."""
    shas_a = [s.solution_sha256 for s in a.samples]
    shas_b = [s.solution_sha256 for s in b.samples]
    return all(shas_a) and shas_a == shas_b


def _speedups(problem: ProblemOutcome, columns: tuple[str, ...]) -> dict[str, float | None]:
    logs = {column: mean_log_speedup(problem, column) for column in columns}
    return {column: None if math.isnan(log) else math.exp(log) for column, log in logs.items()}


def _compare_group(
    pairs: list[tuple[ProblemOutcome, ProblemOutcome]], columns: tuple[str, ...], boot: Bootstrap
) -> GroupComparison:
    run_a, run_b = [a for a, _ in pairs], [b for _, b in pairs]

    def difference(value: Callable[..., float], *args: object) -> Difference:
        a, b = per_problem(run_a, value, *args), per_problem(run_b, value, *args)
        return Difference(float(a.mean()), float(b.mean()), boot.mean(b - a))

    return GroupComparison(
        n_problems=len(pairs),
        correct_rate=difference(correct_share),
        fast_p={column: {p: difference(fast_share, column, p) for p in P_VALUES} for column in columns},
    )


def _difference_dict(d: Difference) -> dict:
    return {"a": d.a, "b": d.b, "difference": d.difference.value, "ci": interval(d.difference)}
