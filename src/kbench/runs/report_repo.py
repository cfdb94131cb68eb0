"""The repository track's section of the HTML report (report_repo.html.j2): runs of tasks, apart.

A report may hold runs of both tracks; they are never mixed in one table or compared
(docs/repo-runs.md). Runs of the repository track get this section: the track's figures
(``runs.repo_score``) per run and per repository, each later run compared with the first
(``runs.repo_comparison``), and per run its manifest, the tasks it pinned (hash and
revision) and one row per patch. ``report.py`` renders the page and hands this module
its jinja2 environment and what it shares with the kernel sections (manifest fields, notes).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

from kbench.runs.comparison import Mismatch, mismatches
from kbench.runs.records import RunData
from kbench.runs.repo_comparison import RepoComparison, compare_repo
from kbench.runs.repo_score import COLUMN, NOT_CLAIMED_ON_CPU, SOLVED_SHARE, RepoScore, is_solved, run_on_cpu
from kbench.runs.score import PENDING, outcomes
from kbench.runs.views import RunSummary, one_line, summarize

TEMPLATE = "report_repo.html.j2"
FIGURES = (
    ("correct_rate", "correct"),
    ("solved", f"solved (≥ {SOLVED_SHARE:g} × expert)"),
    ("faster_than_base", "faster than base"),
    ("geomean_speedup", "geomean speedup over base"),
    ("mean_fraction_of_expert", "mean fraction of expert"),
)


@dataclass(frozen=True)
class PatchRow:
    """One patch (sample) of one task as it stands."""

    task_id: str
    sample_index: int
    sample_name: str | None
    status: str
    speedup: float | None
    interval: tuple[float | None, float | None]
    expert: float | None
    fraction: float | None
    solved: bool | None  # None: judged on a CPU, where it means nothing
    reason: str


@dataclass(frozen=True)
class RepoRunSection:
    summary: RunSummary
    score: RepoScore
    rows: list[PatchRow]
    tasks: list[tuple[str, str, str]]  # (task id, sha256, pinned commit) as the first session's manifest pins them
    manifest: list[tuple[str, str]]
    manifest_json: str
    notes: list[str]


@dataclass(frozen=True)
class RepoComparisonSection:
    run_a: str
    run_b: str
    comparison: RepoComparison
    mismatches: list[Mismatch]


def section(data: RunData, score: RepoScore, manifest: list[tuple[str, str]], manifest_json: str,
            notes: list[str]) -> RepoRunSection:
    pins = data.sessions[0].manifest.tasks if data.sessions else {}
    return RepoRunSection(
        summary=summarize(data),
        score=score,
        rows=patch_rows(data),
        tasks=[(p.problem_id, (pins.get(p.problem_id) or {}).get("sha256") or p.sha256,
                str((pins.get(p.problem_id) or {}).get("commit") or "-")) for p in data.problems],
        manifest=manifest,
        manifest_json=manifest_json,
        notes=notes,
    )


def comparison(data_a: RunData, data_b: RunData, resamples: int, seed: int) -> RepoComparisonSection:
    result = compare_repo(outcomes(data_a), outcomes(data_b), resamples=resamples, seed=seed,
                          cpu=run_on_cpu(data_a) or run_on_cpu(data_b))
    return RepoComparisonSection(data_a.run.name, data_b.run.name, result, mismatches(data_a, data_b))


def patch_rows(data: RunData) -> list[PatchRow]:
    """One row per task and sample, in the run's order; a task without a patch has one row."""
    evaluations = {(e.problem_id, e.sample_index): e for e in data.evaluations}
    samples: dict[str, list] = {}
    for sample in data.samples:
        samples.setdefault(sample.problem_id, []).append(sample)
    tasks = {t.problem_id: t for t in outcomes(data)}
    cpu = run_on_cpu(data)
    rows = []
    for problem in data.problems:
        outcome = tasks[problem.problem_id]
        found = [(s.index, s) for s in samples.get(problem.problem_id, [])] or [(0, None)]
        for (index, sample), sample_outcome in zip(found, outcome.samples):
            record = evaluations.get((problem.problem_id, index))
            bounds = ((record.verdict or {}).get("speedup_interval") or {}).get(COLUMN) if record else None
            speedup = record.speedup.get(COLUMN) if record else None
            rows.append(PatchRow(
                task_id=problem.problem_id,
                sample_index=index,
                sample_name=sample.name if sample else None,
                status=record.status if record else PENDING,
                speedup=speedup,
                interval=(bounds[0], bounds[1]) if bounds else (None, None),
                expert=sample_outcome.expert,  # each patch's verdict timed the expert beside it
                fraction=sample_outcome.fraction if record and record.correct and not cpu else None,
                solved=None if cpu else is_solved(sample_outcome),
                reason=one_line(record.reason) if record else "not evaluated yet",
            ))
    return rows


def render(environment: Any, sections: list[RepoRunSection], comparisons: list[RepoComparisonSection]) -> str:
    """The section's HTML (empty without a repository run), with the page's environment and filters."""
    if not sections:
        return ""
    template = environment.from_string(resources.files("kbench.runs").joinpath(TEMPLATE).read_text())
    return template.render(sections=sections, comparisons=comparisons, figures=FIGURES, all_key="all",
                           solved_share=SOLVED_SHARE, not_claimed_on_cpu=NOT_CLAIMED_ON_CPU)
