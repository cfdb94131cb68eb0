"""What a person looks at in a stored run: one summary per run, one row per sample, and
the detail of one problem (two runs side by side: ``kbench.runs.comparison``).

Shared by ``kbench runs``, ``kbench show`` and the HTML report (``report.py``), so
that the terminal and the page say the same thing about the same records. Pure
functions over ``RunData``, and the two number formats both outputs use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kbench.judge.guard import style_rules
from kbench.runs.records import EvaluationRecord, ProblemRecord, RunData, SampleRecord, TurnRecord
from kbench.runs.score import PENDING, Estimate, columns_of
from kbench.suite import kernelbench

REASON_CHARS = 160  # a one-line reason is cut here: the whole of it is in ``kbench show RUN PROBLEM``


@dataclass(frozen=True)
class RunSummary:
    """One line of ``kbench runs``: what a run is (device, size, dtype, where its solutions
    come from) and how far it got."""

    name: str
    created_at: str
    source: str  # replay, or the provider that generated the solutions
    origin: str  # the solutions directory, or PROVIDER/MODEL
    device: str  # as configured: cpu, cuda, cuda:N
    device_name: str  # the GPU's name, or the CPU's for a CPU run
    size: str
    dtype: str
    columns: tuple[str, ...]
    sessions: int
    sandboxed: bool
    problems: int
    with_solution: int
    samples: int
    evaluated: int  # samples with an outcome (pending ones excluded)
    correct: int  # correct samples

    @property
    def complete(self) -> bool:
        return self.evaluated == self.samples and self.problems > 0


@dataclass(frozen=True)
class SampleRow:
    """One sample of one problem as it stands; a problem without a solution has one row,
    status ``missing``, and a sample not judged yet has status ``pending``."""

    problem_id: str
    level: int | None
    sample_index: int
    sample_name: str | None  # the solution's file (or model), None without a solution
    status: str
    reason: str  # the first line of the reason, cut at REASON_CHARS
    runtime_ms: float | None
    speedup: dict[str, float | None]
    turn: int | None  # for a generated sample, the turn its outcome is
    style: tuple[str, ...] = ()  # the style rules its verdict flags: not counted in "kernels only" when correct


@dataclass(frozen=True)
class SampleDetail:
    """Everything stored about one sample: its row, its solution, its evaluation (whose
    ``verdict`` is the judge's whole verdict) and, for a generated run, every turn."""

    row: SampleRow
    sample: SampleRecord | None
    evaluation: EvaluationRecord | None
    turns: list[TurnRecord]
    superseded: list[EvaluationRecord] = field(default_factory=list)  # earlier verdicts, before a re-judging


@dataclass(frozen=True)
class ProblemDetail:
    problem: ProblemRecord
    samples: list[SampleDetail]


def one_line(reason: str) -> str:
    """The first non-empty line of a reason, cut to REASON_CHARS: tracebacks and multi-line
    messages would otherwise break a one-line-per-sample listing."""
    line = next((part.strip() for part in reason.splitlines() if part.strip()), "")
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 3] + "..."


def speedup_text(value: float | None) -> str:
    """``1.52x``; ``-`` for no speedup (not correct, or not timed)."""
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}x"


def estimate_text(estimate: Estimate, signed: bool = False) -> str:
    """``0.500 [0.200, 0.800]``: a figure with its interval; ``-`` where undefined."""
    if estimate.value is None:
        return "-"
    form = "+.3f" if signed else ".3f"
    if estimate.low is None or estimate.high is None:
        return format(estimate.value, form)
    return f"{estimate.value:{form}} [{estimate.low:{form}}, {estimate.high:{form}}]"


def summarize(data: RunData) -> RunSummary:
    config = data.run.config
    manifest = data.sessions[0].manifest if data.sessions else None
    device_name = (manifest.gpu_name or manifest.cpu or "") if manifest else ""
    rows = sample_rows(data)
    solved = {s.problem_id for s in data.samples}
    with_solution = [r for r in rows if r.problem_id in solved]
    return RunSummary(
        name=data.run.name,
        created_at=data.run.created_at,
        source=config.source,
        origin=config.solutions,
        device=config.device,
        device_name=device_name,
        size=config.size,
        dtype=config.dtype,
        columns=columns_of(data),
        sessions=len(data.sessions),
        sandboxed=config.sandbox,
        problems=len(data.problems),
        with_solution=len({s.problem_id for s in data.samples if s.sha256}),  # not a request that failed
        samples=len(with_solution),
        evaluated=sum(r.status != PENDING for r in with_solution),
        correct=sum(r.status == "correct" for r in rows),
    )


def _row(problem: ProblemRecord, index: int, sample: SampleRecord | None, record: EvaluationRecord | None) -> SampleRow:
    return SampleRow(
        problem_id=problem.problem_id,
        level=problem.level,
        sample_index=index,
        sample_name=sample.name if sample else None,
        status=record.status if record else PENDING,
        reason=one_line(record.reason) if record else "not evaluated yet",
        runtime_ms=record.runtime_ms if record else None,
        speedup=dict(record.speedup) if record else {},
        turn=record.turn if record else None,
        style=style_rules((record.verdict or {}).get("flags")) if record else (),
    )


def problem_details(data: RunData) -> list[ProblemDetail]:
    """Every problem of the run in order, each with every sample's records."""
    evaluations = {(e.problem_id, e.sample_index): e for e in data.evaluations}
    samples: dict[str, list[SampleRecord]] = {}
    for sample in data.samples:
        samples.setdefault(sample.problem_id, []).append(sample)
    turns: dict[tuple[str, int], list[TurnRecord]] = {}
    for turn in data.turns:
        turns.setdefault((turn.problem_id, turn.sample_index), []).append(turn)
    superseded: dict[tuple[str, int], list[EvaluationRecord]] = {}
    for record in data.superseded:
        superseded.setdefault((record.problem_id, record.sample_index), []).append(record)
    details = []
    for problem in data.problems:
        pid = problem.problem_id
        found: list[tuple[int, SampleRecord | None]] = [(s.index, s) for s in samples.get(pid, [])] or [(0, None)]
        details.append(ProblemDetail(problem, [
            SampleDetail(_row(problem, index, sample, evaluations.get((pid, index))), sample,
                         evaluations.get((pid, index)), sorted(turns.get((pid, index), []), key=lambda t: t.turn),
                         superseded.get((pid, index), []))
            for index, sample in found
        ]))
    return details


def sample_rows(data: RunData) -> list[SampleRow]:
    """One row per problem and sample, in the run's order."""
    return [sample.row for detail in problem_details(data) for sample in detail.samples]


def find_problem(data: RunData, query: str) -> ProblemDetail:
    """The problem ``query`` names: its id (``level1/relu``), KernelBench's numbers for one
    of its files (``level1/19`` or ``level_1_problem_19`` for ``level1/19_ReLU``), or, when
    only one problem matches, its name or the last part of its id (``relu``)."""
    details = problem_details(data)
    exact = [d for d in details if d.problem.problem_id == query]
    if exact:
        return exact[0]
    numbered = kernelbench.canonical(query)
    by_number = [d for d in details if numbered and kernelbench.short_id(d.problem.problem_id) == numbered]
    if len(by_number) == 1:
        return by_number[0]
    wanted = query.lower()
    matches = [d for d in details
               if wanted in (d.problem.name.lower(), d.problem.problem_id.rpartition("/")[2].lower())]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(d.problem.problem_id for d in matches)
        raise ValueError(f"{query!r} matches several problems of run {data.run.name!r}: {names}")
    raise ValueError(f"run {data.run.name!r} has no problem {query!r} (`kbench show {data.run.name}` lists them)")
