"""Commands that let a person look at stored runs: ``runs``, ``show`` and ``report``.

Plain aligned text, one line per run or per sample, never wrapped (logs and pipes
read it whole); ``--json`` for tools. The records are shaped by
``kbench.runs.views``; the HTML report is ``kbench.runs.report``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from kbench.cli.common import STORE_OPTION, HelpCommand, UsageError, usage_error, usage_errors
from kbench.cli.scores import RESAMPLES_OPTION, SEED_OPTION
from kbench.cli.verdicts import print_verdict
from kbench.core.verdict import Trial, Verdict
from kbench.runs import views
from kbench.runs.records import RunData, TurnRecord, finite
from kbench.runs.score import CPU_MARK, cpu_note
from kbench.runs.store import Store

JSON_OPTION = typer.Option(False, "--json", help="Print JSON instead of text.")
STATUS_COLOURS = {"correct": "green", "incorrect": "red", "rejected": "magenta", "pending": "bright_black"}


def aligned(rows: list[list[str]], styles: dict[int, Any] | None = None) -> list[str]:
    """Rows of cells as lines with padded columns (the last column is not padded).
    ``styles`` maps a column to a function of the cell giving its colour, applied after
    padding; click drops the colour when the output is not a terminal."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            padded = cell if i == len(row) - 1 else cell.ljust(widths[i])
            colour = (styles or {}).get(i, lambda _: None)(cell)
            cells.append(typer.style(padded, fg=colour) if colour else padded)
        lines.append("  ".join(cells).rstrip())
    return lines


def _load(db: Path, *names: str) -> list[RunData]:
    with usage_errors(), Store(db, create=False) as store:
        return [store.load(name) for name in names]


def runs_command(db: Path = STORE_OPTION, as_json: bool = JSON_OPTION) -> None:
    """The runs in a store, one line each: when, on what, from where, and how far they got."""
    with usage_errors(), Store(db, create=False) as store:
        summaries = [views.summarize(store.load(name)) for name in store.run_names()]
    if as_json:
        typer.echo(json.dumps([asdict(s) for s in summaries], indent=2))
        return
    if not summaries:
        typer.echo(f"no runs in {db}")
        return
    header = ["run", "created", "device", "size", "dtype", "solutions", "problems", "samples", "evaluated", "correct"]
    rows = [header] + [[
        s.name, s.created_at[:16].replace("T", " "), f"{s.device} ({s.device_name})" if s.device_name else s.device,
        s.size, s.dtype, s.origin if s.source == "replay" else f"{s.origin} ({s.source})",
        str(s.problems), str(s.samples), f"{s.evaluated}/{s.samples}", str(s.correct),
    ] for s in summaries]
    for line in aligned(rows):
        typer.echo(line)


def show_command(
    run: str = typer.Argument(..., help="Run name."),
    problem: Optional[str] = typer.Argument(None, help="A problem of the run (its id, or its name when unique)."),
    db: Path = STORE_OPTION,
    full: bool = typer.Option(False, "--full", help="With PROBLEM: also the solution source and every turn's "
                              "prompt and reply."),
    as_json: bool = JSON_OPTION,
) -> None:
    """One line per problem and sample (status, speedups, reason); with PROBLEM, all that is stored about it."""
    (data,) = _load(db, run)
    if problem is None:
        _show_run(data, as_json)
        return
    with usage_errors():
        detail = views.find_problem(data, problem)
    if as_json:
        typer.echo(json.dumps(finite(asdict(detail)), indent=2, default=str))
    else:
        _show_problem(data, detail, full)


def _show_run(data: RunData, as_json: bool) -> None:
    rows = views.sample_rows(data)
    if as_json:
        typer.echo(json.dumps(finite([asdict(r) for r in rows]), indent=2))
        return
    summary = views.summarize(data)
    typer.echo(f"run {summary.name}: {summary.problems} problems, {summary.evaluated} of {summary.samples} samples "
               f"evaluated, {summary.correct} correct; {summary.device} ({summary.device_name or 'device unknown'}), "
               f"size {summary.size}, {summary.dtype}" + (f"; speedups {CPU_MARK}" if cpu_note(summary.device)
                                                          and data.run.config.measure_time else ""))
    columns = summary.columns
    table = [["problem", "sample", "status", *columns, "reason"]] + [
        [r.problem_id, "-" if r.sample_name is None else f"#{r.sample_index}", r.status,
         *(views.speedup_text(r.speedup.get(c)) for c in columns), r.reason]
        for r in rows
    ]
    for line in aligned(table, {2: STATUS_COLOURS.get}):
        typer.echo(line)


def verdict_of(stored: dict[str, Any]) -> Verdict | None:
    """The stored verdict as a ``Verdict`` for the terminal rendering, or None when it no
    longer fits the class (a store from another kbench version: then shown as JSON)."""
    known = {f.name for f in fields(Verdict)}
    try:
        values = {k: v for k, v in stored.items() if k in known}
        values["trials"] = [Trial(**t) for t in values.get("trials", [])]
        return Verdict(**values)
    except (TypeError, ValueError):
        return None


def _show_problem(data: RunData, detail: views.ProblemDetail, full: bool) -> None:
    console = Console(soft_wrap=True, highlight=False)
    problem = detail.problem
    console.print(f"[bold]{problem.problem_id}[/bold] ({problem.name}, level {problem.level}) in run "
                  f"{data.run.name}; problem file {problem.path} (sha256 {problem.sha256[:12]})")
    for sample in detail.samples:
        console.print()
        row = sample.row
        if sample.sample is None:
            console.print(f"no solution: {row.status} ({row.reason})", markup=False)
            continue
        speedups = "".join(f", {views.speedup_text(v)} {c}" for c, v in row.speedup.items() if v is not None)
        console.print(f"[bold]sample #{row.sample_index}[/bold]: {sample.sample.name} (sha256 "
                      f"{sample.sample.sha256[:12]}): {row.status}{speedups}"
                      + (f", the outcome of turn {row.turn}" if row.turn else ""))
        _print_evaluation(console, sample)
        _print_superseded(console, sample)
        if full:
            _print_block(console, "solution", sample.sample.source)
        for turn in sample.turns:
            _print_turn(console, turn, full)


def _print_evaluation(console: Console, sample: views.SampleDetail) -> None:
    evaluation = sample.evaluation
    if evaluation is None:
        console.print("  not evaluated yet")
        return
    verdict = verdict_of(evaluation.verdict) if evaluation.verdict else None
    if verdict is None:
        # No verdict from the judge (missing, no_code, infra_error...), or one this version cannot read.
        console.print(f"  {evaluation.status}: {evaluation.reason}", markup=False)
        if evaluation.verdict:
            _print_block(console, "verdict", json.dumps(finite(evaluation.verdict), indent=2))
        return
    print_verdict(console, replace(verdict, output_tail=""))  # the tail follows whole, whatever the status
    if not all(trial.ok for trial in verdict.trials):  # all matching, the reason says so already
        for trial in verdict.trials:
            outcome = "ok" if trial.ok else f"failed ({trial.check})"
            console.print(f"  trial {trial.index}: {outcome}" + (f": {trial.detail}" if trial.detail else ""),
                          markup=False)
    if verdict.output_tail.strip():
        _print_block(console, f"output tail ({verdict.output_bytes} bytes)", verdict.output_tail)


def _print_superseded(console: Console, sample: views.SampleDetail) -> None:
    """The verdicts a re-judging replaced (kbench run --rejudge), oldest first."""
    if not sample.superseded or sample.evaluation is None:
        return
    console.print(f"  judged again in session {sample.evaluation.session} (kbench run --rejudge); before:", markup=False)
    for earlier in sample.superseded:
        console.print(f"  earlier verdict, session {earlier.session}: {earlier.status}: {views.one_line(earlier.reason)}",
                      markup=False)


def _print_turn(console: Console, turn: TurnRecord, full: bool) -> None:
    speedups = ", ".join(f"{views.speedup_text(v)} {c}" for c, v in turn.speedup.items() if v is not None)
    tokens = f"{turn.input_tokens} in, {turn.output_tokens} out tokens" if turn.input_tokens is not None else "tokens unknown"
    cost = f", ${turn.cost_usd:.4f}" if turn.cost_usd is not None else ""
    template = turn.prompt_record.get("template", "?")
    console.print(f"  turn {turn.turn} (session {turn.session}, {turn.generated_at or 'not generated'}): "
                  f"{turn.status or 'not judged yet'}" + (f" ({speedups})" if speedups else ""), markup=False)
    if turn.reason:
        console.print(f"    reason: {views.one_line(turn.reason)}", markup=False)
    console.print(f"    prompt {template}, {len(turn.prompt)} chars; reply "
                  f"{'none' if turn.reply is None else f'{len(turn.reply)} chars'}; {tokens}{cost}", markup=False)
    if full:
        _print_block(console, f"turn {turn.turn} prompt", turn.prompt, indent="    ")
        _print_block(console, f"turn {turn.turn} reply", turn.reply or "", indent="    ")


def _print_block(console: Console, title: str, text: str, indent: str = "  ") -> None:
    console.print(f"{indent}{title}:", markup=False)
    for line in text.rstrip().splitlines():
        console.print(f"{indent}  {line}", markup=False)


def report_command(
    runs: list[str] = typer.Argument(..., help="Run names; with several, each is compared with the first."),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="The HTML file to write."),
    db: Path = STORE_OPTION,
    seed: int = SEED_OPTION,
    resamples: int = RESAMPLES_OPTION,
) -> None:
    """One self-contained HTML file (opens offline): manifest, coverage, fast_p, speedups, every problem."""
    from kbench.runs import report

    data = _load(db, *runs)
    try:
        html = report.render(data, resamples=resamples, seed=seed)
    except report.MissingDependency as exc:
        raise usage_error(str(exc)) from exc
    with usage_errors():
        try:
            output.write_text(html)
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc}") from exc
    typer.echo(f"wrote the report of {', '.join(runs)} to {output} ({len(html) / 1e6:.1f} MB, opens offline)",
               err=True)


def register(app: typer.Typer) -> None:
    app.command("runs", cls=HelpCommand)(runs_command)
    app.command("show", cls=HelpCommand)(show_command)
    app.command("report", cls=HelpCommand)(report_command)
