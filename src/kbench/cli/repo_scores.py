"""``kbench score`` of a repository-track run: its own tables (kbench.runs.repo_score), never fast_p."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer
from rich.console import Console
from rich.table import Table

from kbench.agents import loop as agent
from kbench.cli.common import print_run_state, run_document
from kbench.cli.verdicts import CPU_NOTE
from kbench.repo.expert import NOT_MEANINGFUL_ON_CPU
from kbench.runs.comparison import Mismatch
from kbench.runs.records import RunData, finite
from kbench.runs.repo_comparison import compare_repo
from kbench.runs.repo_score import (
    ALL,
    NOT_CLAIMED_ON_CPU,
    SOLVED_SHARE,
    RepoScore,
    repo_run_score,
    repo_score_by_turn,
    run_on_cpu,
)
from kbench.runs.score import DEFAULT_RESAMPLES, DEFAULT_SEED, outcomes
from kbench.runs.views import estimate_text

# The figures of a table row, with the header each gets.
FIGURES = (
    ("correct_rate", "correct"),
    ("solved", f"solved (>= {SOLVED_SHARE:g} x expert)"),
    ("faster_than_base", "faster than base"),
    ("geomean_speedup", "geomean speedup over base"),
    ("mean_fraction_of_expert", "mean fraction of expert"),
)
# What ``score --json`` gives for each turn (the whole run's figures).
TURN_KEYS = ("n_tasks", "coverage", "correct_rate", "correct_rate_ci", "solved", "solved_ci", "failures")


def show_repo_score(out: Console, data: RunData, as_json: bool, *, resamples: int = DEFAULT_RESAMPLES,
                    seed: int = DEFAULT_SEED) -> None:
    """The run's score as tables on ``out``, or as one JSON object on stdout."""
    result = repo_run_score(data, resamples=resamples, seed=seed)
    by_turn = repo_score_by_turn(data, resamples=resamples, seed=seed) if data.run.config.turns > 1 else {}
    if as_json:
        typer.echo(json.dumps(finite(repo_score_document(data, result, by_turn)), indent=2, allow_nan=False))
    else:
        print_repo_score(out, data, result, by_turn)


def repo_score_document(data: RunData, result: RepoScore, by_turn: dict[int, RepoScore] | None = None) -> dict:
    """The score with what it is a score of: the run, its manifest (the tasks' hashes and revisions
    among it), changes between sessions; for a model's run the figures by turn and the usage."""
    document = run_document(data, result.overall.coverage.evaluated == result.overall.n_tasks, result.to_dict())
    if by_turn:
        document["by_turn"] = {str(turn): {key: scored.to_dict()[key] for key in TURN_KEYS}
                               for turn, scored in by_turn.items()}
    if data.turns:
        used = agent.usage(data.turns)
        document["usage"] = used.to_dict()
    return document


def _figure(result: RepoScore, group: object, name: str) -> str:
    if result.cpu and name in NOT_CLAIMED_ON_CPU:
        return "not meaningful on a CPU"
    return estimate_text(getattr(group, name))


def _label(key: str) -> str:
    return "all" if key == ALL else key


def print_repo_score(out: Console, data: RunData, result: RepoScore, by_turn: dict[int, RepoScore] | None = None) -> None:
    manifest = data.sessions[0].manifest
    overall, config = result.overall, data.run.config
    revision = (manifest.git_revision or "unknown")[:12] + (" (dirty)" if manifest.git_dirty else "")
    out.print(f"[bold]run {data.run.name}[/bold] (repository track): {overall.n_tasks} tasks on "
              f"{manifest.gpu_name or manifest.cpu} ({config.device}), kbench {manifest.kbench_version} at {revision}, "
              f"torch {manifest.torch}, policy {config.policy}", highlight=False, soft_wrap=True)
    if not config.sandbox:
        out.print("[bold yellow]not sandboxed[/bold yellow] (--no-sandbox): patches ran with the judge's privileges",
                  highlight=False, soft_wrap=True)
    if run_on_cpu(data):
        out.print(f"[yellow]note:[/yellow] {CPU_NOTE}", highlight=False, soft_wrap=True)
        out.print(f"[yellow]solved and mean fraction of expert:[/yellow] {NOT_MEANINGFUL_ON_CPU}", highlight=False,
                  soft_wrap=True)
    coverage = overall.coverage
    out.print(f"coverage: {coverage.with_solution} of {coverage.problems} tasks with a patch, {coverage.evaluated} "
              f"evaluated; {coverage.samples_evaluated} of {coverage.samples} samples evaluated",
              highlight=False, soft_wrap=True)
    table = Table("", "tasks", *(header for _, header in FIGURES),
                  title=f"repository tasks ({result.confidence:.0%} bootstrap intervals over tasks; a patch that is "
                  "not correct counts as the base revision: speedup 1, fraction of expert 0)")
    for key, group in result.groups.items():
        table.add_row(_label(key), str(group.n_tasks), *(_figure(result, group, name) for name, _ in FIGURES))
    out.print(table)
    if overall.expert_unknown:
        out.print(f"[yellow]{overall.expert_unknown} tasks with a correct patch but no expert speedup[/yellow] (the "
                  "expert patch failed here: audit the task): never solved, left out of the mean fraction of expert",
                  highlight=False, soft_wrap=True)
    if by_turn:
        turns = Table("", *(f"turn {t}" for t in by_turn), title="after each turn, all tasks (a sample's best "
                      "judged turn so far)")
        for name, header in FIGURES:
            turns.add_row(header, *(_figure(s, s.overall, name) for s in by_turn.values()))
        out.print(turns)
    if data.turns:
        used = agent.usage(data.turns)
        out.print(f"generation: {config.solutions}, {used.requests} requests ({used.failed_requests} failed), "
                  f"{used.input_tokens} input and {used.output_tokens} output tokens, {used.cost_text()}",
                  highlight=False, soft_wrap=True)
    print_run_state(out, data, overall.statuses, coverage.evaluated, coverage.problems, items="tasks",
                    judged="patch")


def show_repo_comparison(out: Console, run_a: RunData, run_b: RunData, differences: list[Mismatch], as_json: bool, *,
                         resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> None:
    """``kbench compare`` of two repository-track runs: the paired difference B - A of each figure."""
    result = compare_repo(outcomes(run_a), outcomes(run_b), resamples=resamples, seed=seed,
                          cpu=run_on_cpu(run_a) or run_on_cpu(run_b))
    a, b = run_a.run.name, run_b.run.name
    if as_json:
        document = {"run_a": a, "run_b": b, "mismatches": [asdict(m) for m in differences], **result.to_dict()}
        typer.echo(json.dumps(finite(document), indent=2, default=str))
        return
    for mismatch in differences:
        out.print(f"[yellow]differs[/yellow] {mismatch.name}: A {mismatch.a} | B {mismatch.b}", highlight=False,
                  soft_wrap=True)
    if not result.n_tasks:
        out.print(f"runs {a} and {b} share no tasks", highlight=False)
        return
    out.print(f"A = {a}, B = {b} (repository track): {result.n_tasks} shared tasks", highlight=False)
    for label, ids in (("only in A", result.only_a), ("only in B", result.only_b),
                       ("changed between the runs (left out)", result.changed)):
        if ids:
            out.print(f"{label}: {', '.join(ids)}", highlight=False, soft_wrap=True)
    table = Table("figure", "A", "B", "B - A", f"{result.confidence:.0%} interval",
                  title="paired difference B - A over the shared tasks")
    headers = dict(FIGURES)
    for name, d in result.differences.items():
        table.add_row(headers[name], f"{d.a:.3f}", f"{d.b:.3f}", f"{d.difference.value:+.3f}",
                      f"[{d.difference.low:+.3f}, {d.difference.high:+.3f}]")
    out.print(table)
    if result.flipped:
        flips = Table("task", "A", "B", "patch", title=f"{len(result.flipped)} tasks whose status flipped")
        for flip in result.flipped:
            flips.add_row(flip.problem_id, flip.status_a, flip.status_b,
                          "same patch" if flip.same_solution else "changed")
        out.print(flips)
