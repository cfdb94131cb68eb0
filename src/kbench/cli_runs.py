"""``kbench run``, ``score``, ``compare`` and ``export``: runs in a store, and their scores (docs/runs.md)."""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from kbench import export, judge, runner
from kbench.guard import DEFAULT_POLICY
from kbench.judge import DEFAULT_TIMEOUT, DEFAULT_TRIALS, resolve_device
from kbench.manifest import RunConfig
from kbench.problem import ProblemError, resolve_size
from kbench.score import ALL, DEFAULT_RESAMPLES, DEFAULT_SEED, P_VALUES, Estimate, Score, columns_of, outcomes
from kbench.score import compare as compare_runs
from kbench.score import score as score_run
from kbench.solution import SolutionError
from kbench.store import DEFAULT_PATH, RETRIED_STATUSES, EvaluationRecord, RunData, Store, StoreError, finite

RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
console = Console()
# Replaced in tests by a fake judge; the commands look it up at call time.
evaluate = judge.evaluate

DB_OPTION = typer.Option(DEFAULT_PATH, "--db", envvar="KBENCH_DB", help="The store file (env KBENCH_DB).")
SEED_OPTION = typer.Option(DEFAULT_SEED, help="Seed of the bootstrap resampling.")
RESAMPLES_OPTION = typer.Option(DEFAULT_RESAMPLES, min=100, help="Bootstrap resamples.")


class _Usage(Exception):
    """A usage error: reported on stderr with exit status 2."""


@contextmanager
def _usage_errors() -> Iterator[None]:
    try:
        yield
    except (_Usage, StoreError, runner.RunError, ProblemError, SolutionError, export.ExportError, ValueError) as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}", highlight=False)
        raise typer.Exit(code=2) from exc


def run_command(
    run: str = typer.Option(..., "--run", "-r", help="Name of the run; running the same name again resumes it."),
    solutions: Optional[Path] = typer.Option(None, "--solutions", "-s", help="Directory of solution files."),
    problems: Optional[List[str]] = typer.Option(
        None, "--problems", "-p", help="A level (level1), problem ids or files, or a directory; repeatable."
    ),
    db: Path = DB_OPTION,
    device: Optional[str] = typer.Option(None, help="cpu, cuda or cuda:N [default: cuda if present, else cpu]"),
    baseline: Optional[List[str]] = typer.Option(None, help="A baseline column; repeatable [default: eager]."),
    size: Optional[str] = typer.Option(None, help="auto (small on a CPU), default or small [default: auto]."),
    trials: Optional[int] = typer.Option(None, min=1, help=f"Correctness trials [default: {DEFAULT_TRIALS}]."),
    timeout: Optional[float] = typer.Option(None, min=1, help=f"Seconds per evaluation [default: {DEFAULT_TIMEOUT:g}]."),
    policy: Optional[str] = typer.Option(None, help="Guard policy: strict, lenient or off [default: strict]."),
    plain: bool = typer.Option(False, "--plain", help="A line per evaluation, for logs (the default off a terminal)."),
) -> None:
    """Judge solutions from a directory against a selection of problems, storing every verdict.

    Options left out when resuming are taken from the run as stored; options given must match it.
    """
    with _usage_errors():
        if not RUN_NAME.fullmatch(run):
            raise _Usage(f"run name {run!r}: use letters, digits, '.', '_' and '-'")
        stored = None
        if db.exists():
            with Store(db, create=False) as store:
                stored = store.run(run)
        config, plan = _config_and_plan(stored.config if stored else None, solutions, problems, device,
                                        baseline, size, trials, timeout, policy)
        if plan.unclaimed:
            shown = ", ".join(plan.unclaimed[:5]) + (", ..." if len(plan.unclaimed) > 5 else "")
            Console(stderr=True).print(
                f"[yellow]warning:[/yellow] {len(plan.unclaimed)} files in {config.solutions} match no selected "
                f"problem: {shown}", highlight=False, soft_wrap=True
            )
        with Store(db) as store:
            listener = PlainProgress(console) if plain or not console.is_terminal else BarProgress(console)
            try:
                with _sigterm_interrupts():
                    runner.execute(store, run, config, plan, evaluate=evaluate, listener=listener)
            except KeyboardInterrupt:
                listener.close()
                Console(stderr=True).print(
                    f"interrupted: finished verdicts are stored; resume with `kbench run --run {run} --db {db}`"
                )
                raise typer.Exit(code=130) from None
            listener.close()
            data = store.load(run)
    print_score(console, data, score_run(outcomes(data), columns_of(data)))


def _config_and_plan(stored: RunConfig | None, solutions, problems, device, baseline, size, trials, timeout, policy):
    """The run's config from the options, those left out taken from a stored run (or the defaults)."""
    if stored is None and (solutions is None or not problems):
        raise _Usage("a new run needs --solutions and --problems")
    selection = tuple(problems) if problems else stored.selection
    solutions_dir = solutions if solutions is not None else Path(stored.solutions)
    device = resolve_device(device if device is not None else stored.device if stored else None)
    size = resolve_size(size or (stored.size if stored else "auto"), device)
    plan = runner.plan_replay(runner.select_problems(selection), solutions_dir)
    config = runner.run_config(
        plan,
        selection=selection,
        solutions=solutions_dir,
        device=device,
        size=size,
        trials=trials or (stored.trials if stored else DEFAULT_TRIALS),
        timeout=timeout or (stored.timeout if stored else DEFAULT_TIMEOUT),
        baselines=tuple(baseline) if baseline else stored.baselines if stored else runner.AVAILABLE_BASELINES,
        policy=policy or (stored.policy if stored else DEFAULT_POLICY),
    )
    return config, plan


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """A scheduler's SIGTERM stops a run as Ctrl-C does: workers cleaned up, verdicts kept."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _counts(records: list[EvaluationRecord]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    return counts


def _counts_text(counts: dict[str, int]) -> str:
    return "  ".join(f"{status} {n}" for status, n in sorted(counts.items(), key=lambda item: -item[1]))


def _outcome_text(record: EvaluationRecord) -> str:
    speedups = ", ".join(f"{s:.3g}x {column}" for column, s in record.speedup.items() if s is not None)
    return f"{record.status}" + (f" ({speedups})" if speedups else "")


class BarProgress:
    """A progress bar: evaluations done, verdicts so far, time left."""

    def __init__(self, console: Console):
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[verdicts]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
        )

    def started(self, total: int, done: list[EvaluationRecord]) -> None:
        self.counts = _counts(done)
        self.task = self.progress.add_task("evaluating", total=total, completed=len(done),
                                           verdicts=_counts_text(self.counts))
        self.progress.start()

    def finished(self, record: EvaluationRecord) -> None:
        self.counts[record.status] = self.counts.get(record.status, 0) + 1
        self.progress.console.print(f"{record.problem_id} #{record.sample_index}: {_outcome_text(record)}",
                                    highlight=False, markup=False)
        self.progress.update(self.task, advance=1, verdicts=_counts_text(self.counts))

    def close(self) -> None:
        self.progress.stop()


class PlainProgress:
    """One line per evaluation, with counts and an estimate of the time left."""

    def __init__(self, console: Console):
        self.console = console

    def started(self, total: int, done: list[EvaluationRecord]) -> None:
        self.total, self.done, self.already, self.start = total, len(done), len(done), time.monotonic()
        self.console.print(
            f"{total - self.done} to evaluate; {self.done} recorded already ({_counts_text(_counts(done)) or 'none'})",
            highlight=False,
            soft_wrap=True,
        )

    def finished(self, record: EvaluationRecord) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        left = elapsed / (self.done - self.already) * (self.total - self.done)
        self.console.print(
            f"[{self.done}/{self.total}] {record.problem_id} #{record.sample_index}: {_outcome_text(record)}"
            f"  elapsed {elapsed:.0f}s, about {left:.0f}s left",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        sys.stdout.flush()

    def close(self) -> None:
        pass


def score_command(
    run: str = typer.Argument(..., help="Run name."),
    db: Path = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    seed: int = SEED_OPTION,
    resamples: int = RESAMPLES_OPTION,
) -> None:
    """fast_p, correctness, geometric-mean speedup and fast_p@k, per baseline column and level, with 95% intervals."""
    with _usage_errors(), Store(db, create=False) as store:
        data = store.load(run)
    result = score_run(outcomes(data), columns_of(data), resamples=resamples, seed=seed)
    if as_json:
        typer.echo(json.dumps(finite(score_document(data, result)), indent=2, allow_nan=False))
    else:
        print_score(console, data, result)


def score_document(data: RunData, result: Score) -> dict:
    """The score with what it is a score of: the run, its manifest, and any change between sessions."""
    first = data.sessions[0].manifest
    return {
        "run": data.run.name,
        "created_at": data.run.created_at,
        "complete": result.overall.coverage.evaluated == result.overall.n_problems,
        **result.to_dict(),
        "manifest": first.to_dict(),
        "sessions": [
            {"number": s.number, "started_at": s.started_at,
             "changes": {k: list(v) for k, v in s.manifest.changes_from(first).items()}}
            for s in data.sessions
        ],
    }


def _cell(estimate: Estimate, signed: bool = False) -> str:
    if estimate.value is None:
        return "-"
    form = "+.3f" if signed else ".3f"
    if estimate.low is None:
        return format(estimate.value, form)
    return f"{estimate.value:{form}} [{estimate.low:{form}}, {estimate.high:{form}}]"


def _group_label(key: str) -> str:
    return "all" if key == ALL else f"level {key}"


def print_score(out: Console, data: RunData, result: Score) -> None:
    manifest = data.sessions[0].manifest
    overall = result.overall
    coverage = overall.coverage
    revision = (manifest.git_revision or "unknown")[:12] + (" (dirty)" if manifest.git_dirty else "")
    out.print(
        f"[bold]run {data.run.name}[/bold]: {overall.n_problems} problems on {manifest.gpu_name or manifest.cpu} "
        f"({data.run.config.device}), kbench {manifest.kbench_version} at {revision}, torch {manifest.torch}",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        f"coverage: {coverage.with_solution} of {coverage.problems} problems with a solution, "
        f"{coverage.evaluated} evaluated; {coverage.samples_evaluated} of {coverage.samples} samples evaluated",
        highlight=False,
        soft_wrap=True,
    )
    rate = Table("", "problems", "correct", *(f"geomean speedup ({c})" for c in result.columns),
                 title=f"correctness and speed ({result.confidence:.0%} bootstrap intervals over problems)")
    for key, group in result.groups.items():
        rate.add_row(_group_label(key), str(group.n_problems), _cell(group.correct_rate),
                     *(_cell(group.geomean_speedup[c]) for c in result.columns))
    out.print(rate)
    for column in result.columns:
        table = Table("p", *(_group_label(key) for key in result.groups), title=f"fast_p over {column}")
        for p in P_VALUES:
            table.add_row(f"{p:g}", *(_cell(group.fast_p[column][p]) for group in result.groups.values()))
        out.print(table)
        if result.ks:
            at_k = Table("p", *(f"k={k}" for k in result.ks), title=f"fast_p@k over {column}, all problems")
            for p in P_VALUES:
                at_k.add_row(f"{p:g}", *(_cell(overall.fast_p_at_k[column][k][p]) for k in result.ks))
            out.print(at_k)
    out.print("outcomes: " + _counts_text(overall.statuses), highlight=False)
    if coverage.evaluated < coverage.problems:
        out.print(f"[yellow]incomplete:[/yellow] {coverage.problems - coverage.evaluated} problems not fully "
                  "evaluated count as failures; run the same `kbench run` again to finish")
    retried = sum(n for status, n in overall.statuses.items() if status in RETRIED_STATUSES)
    if retried:
        out.print(f"[yellow]{retried} evaluations failed outside the candidate[/yellow] "
                  f"({', '.join(sorted(RETRIED_STATUSES))}); `kbench run` with the same name retries them")
    for session in data.sessions[1:]:
        changes = session.manifest.changes_from(manifest)
        if changes:
            described = "; ".join(f"{k}: {old} -> {new}" for k, (old, new) in changes.items())
            out.print(f"[yellow]session {session.number} ran in a different environment:[/yellow] {described}",
                      highlight=False)


def compare_command(
    run_a: str = typer.Argument(..., help="The first run (A)."),
    run_b: str = typer.Argument(..., help="The second run (B); differences are B - A."),
    db: Path = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    seed: int = SEED_OPTION,
    resamples: int = RESAMPLES_OPTION,
) -> None:
    """Paired difference B - A on the problems both runs share, per level and baseline column."""
    with _usage_errors(), Store(db, create=False) as store:
        data_a, data_b = store.load(run_a), store.load(run_b)
    columns = tuple(c for c in columns_of(data_a) if c in columns_of(data_b))
    result = compare_runs(outcomes(data_a), outcomes(data_b), columns, resamples=resamples, seed=seed)
    if as_json:
        typer.echo(json.dumps(finite({"run_a": run_a, "run_b": run_b, **result.to_dict()}), indent=2))
        return
    if ALL not in result.groups:
        console.print(f"runs {run_a} and {run_b} share no problems", highlight=False)
        return
    console.print(f"[bold]{run_b} - {run_a}[/bold] on {result.groups[ALL].n_problems} shared problems", highlight=False)
    for label, ids in (("only in " + run_a, result.only_a), ("only in " + run_b, result.only_b),
                       ("changed between the runs (left out)", result.changed)):
        if ids:
            console.print(f"{label}: {', '.join(ids)}", highlight=False)
    for column in columns:
        table = Table("", "problems", "correct", *(f"fast_{p:g}" for p in P_VALUES),
                      title=f"paired difference over {column} ({result.confidence:.0%} bootstrap intervals)")
        for key, group in result.groups.items():
            table.add_row(_group_label(key), str(group.n_problems), _cell(group.correct_rate.difference, True),
                          *(_cell(group.fast_p[column][p].difference, True) for p in P_VALUES))
        console.print(table)


def export_command(
    run: str = typer.Argument(..., help="Run name."),
    format: str = typer.Option("jsonl", "--format", "-f", help=f"One of {', '.join(export.FORMATS)}."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="File to write ('-': stdout) [default: RUN.jsonl, RUN.parquet, RUN.eval_results.json]."
    ),
    db: Path = DB_OPTION,
) -> None:
    """Write a run's evaluations for other tools: JSON lines, Parquet, or KernelBench's eval_results.json."""
    with _usage_errors():
        if format not in export.FORMATS:
            raise _Usage(f"unknown format {format!r}; choose from {', '.join(export.FORMATS)}")
        with Store(db, create=False) as store:
            data = store.load(run)
        default_name = {"jsonl": f"{run}.jsonl", "parquet": f"{run}.parquet", "kernelbench": f"{run}.eval_results.json"}
        target = output or Path(default_name[format])
        if format == "parquet":
            if str(target) == "-":
                raise _Usage("parquet is binary: give --output a file")
            count = export.write_parquet(data, target)
        else:
            write = export.write_jsonl if format == "jsonl" else export.write_kernelbench
            if str(target) == "-":
                count = write(data, sys.stdout)
            else:
                with open(target, "w") as out:
                    count = write(data, out)
    if str(target) != "-":
        Console(stderr=True).print(f"wrote {count} evaluations of run {run} to {target}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("score")(score_command)
    app.command("compare")(compare_command)
    app.command("export")(export_command)
