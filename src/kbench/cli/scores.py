"""Commands that read a run's verdicts: ``score``, ``compare`` and ``export``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from kbench.agents import loop as agent
from kbench.cli.common import (
    STORE_OPTION,
    HelpCommand,
    UsageError,
    make_console,
    print_run_state,
    run_document,
    usage_errors,
)
from kbench.cli.repo_scores import show_repo_comparison, show_repo_score
from kbench.judge.protocol.pairs import pairs_taken
from kbench.runs import export
from kbench.runs.comparison import Flip, Mismatch, RunComparison, mismatches, track_difference
from kbench.runs.comparison import compare as compare_runs
from kbench.runs.kernelbench_score import kernelbench_figures, kernelbench_score
from kbench.runs.records import RunData, finite
from kbench.runs.repo_score import TRACK as REPO_TRACK
from kbench.runs.score import (
    ALL,
    CPU_MARK,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    P_VALUES,
    Score,
    columns_of,
    outcomes,
    same_solution_flips,
    score_by_turn,
)
from kbench.runs.score import score as score_run
from kbench.runs.store import Store
from kbench.runs.views import estimate_text

console = make_console()
SEED_OPTION = typer.Option(DEFAULT_SEED, help="Seed of the bootstrap resampling.")
RESAMPLES_OPTION = typer.Option(DEFAULT_RESAMPLES, min=100, help="Bootstrap resamples.")


def score_command(
    run: str = typer.Argument(..., help="Run name."),
    db: Path = STORE_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    seed: int = SEED_OPTION,
    resamples: int = RESAMPLES_OPTION,
) -> None:
    """fast_p, correctness, geometric-mean speedup and fast_p@k, per baseline column and level, with 95% intervals."""
    with usage_errors(), Store(db, create=False) as store:
        data = store.load(run)
    if data.run.config.track == REPO_TRACK:  # scored apart: its own tables
        show_repo_score(console, data, as_json, resamples=resamples, seed=seed)
        return
    result = score_run(outcomes(data), columns_of(data), resamples=resamples, seed=seed,
                       device=data.run.config.device)
    by_turn = score_by_turn(data, columns_of(data), resamples=resamples, seed=seed)
    if as_json:
        typer.echo(json.dumps(finite(score_document(data, result, by_turn)), indent=2, allow_nan=False))
    else:
        print_score(console, data, result, by_turn)


def score_document(data: RunData, result: Score, by_turn: dict[int, Score] | None = None) -> dict:
    """The score with what it is a score of: the run, its manifest, and any change between
    sessions; for a generated run also the scores after each turn, and the tokens and cost."""
    document = run_document(data, result.overall.coverage.evaluated == result.overall.n_problems, result.to_dict())
    document["kernelbench_compatible"] = kernelbench_figures(outcomes(data), result)  # KernelBench's criterion
    if data.turns:
        by_turn = by_turn if by_turn is not None else score_by_turn(data, columns_of(data))
        flips = same_solution_flips(data)
        document["by_turn"] = {
            str(turn): {**{key: scored.to_dict()[key] for key in TURN_KEYS},
                        "same_solution_flips": flips.get(turn, 0)}
            for turn, scored in by_turn.items()
        }
        document["usage"] = {
            **agent.usage(data.turns).to_dict(),
            "samples": [
                {"problem_id": problem_id, "sample_index": index, **used.to_dict()}
                for (problem_id, index), used in agent.usage_by_sample(data.turns).items()
            ],
        }
    return document


# What ``score --json`` gives for each turn (the whole selection's figures).
TURN_KEYS = ("n_problems", "coverage", "correct_rate", "correct_rate_ci", "fast_p", "fast_p_ci", "failures")


def _group_label(key: str) -> str:
    return "all" if key == ALL else f"level {key}"


PUBLISHED_COLUMN = "compile"  # the figure people publish: correct and faster than default torch.compile


def _published_line(result: Score, device_name: str) -> str:
    """fast_1 over default torch.compile per level, first: what a paper's table would quote,
    and beside it the same counting only kernels (correct solutions with no style flag)."""
    def levels(figure: str) -> str:
        return "; ".join(f"{_group_label(key)} {estimate_text(getattr(group, figure)[PUBLISHED_COLUMN][1.0])}"
                         for key, group in result.groups.items())

    return (f"[bold]fast_1 over torch.compile[/bold] on {device_name}: {levels('fast_p')}{_mark(result)}\n"
            f"  {KERNELS_ONLY}: {levels('fast_p_kernels_only')}")


def _mark(result: Score | RunComparison) -> str:
    """What a speedup figure's title carries when its speedups were timed on a CPU."""
    return f" ({CPU_MARK})" if result.cpu_note else ""


KERNELS_ONLY = "kernels only (correct with no style flag)"


def _pairs_taken(data: RunData) -> str:
    """How many worker pairs the run's timed verdicts took, where the stopping rule chose (``max_pairs``
    above ``pairs``): what ``--decide-at`` saved is read here."""
    if data.run.config.max_pairs <= data.run.config.pairs:
        return ""
    taken = Counter(pairs_taken(e.verdict["timing"]) for e in data.evaluations
                    if e.correct and e.verdict and e.verdict.get("timing"))
    if not taken:
        return ""
    return " (verdicts by pairs taken: " + ", ".join(f"{n}: {count}" for n, count in sorted(taken.items())) + ")"


def print_score(out: Console, data: RunData, result: Score, by_turn: dict[int, Score] | None = None) -> None:
    manifest = data.sessions[0].manifest
    overall = result.overall
    coverage = overall.coverage
    revision = (manifest.git_revision or "unknown")[:12] + (" (dirty)" if manifest.git_dirty else "")
    out.print(
        f"[bold]run {data.run.name}[/bold]: {overall.n_problems} problems on {manifest.gpu_name or manifest.cpu} "
        f"({data.run.config.device}), kbench {manifest.kbench_version} at {revision}, torch {manifest.torch}, "
        f"policy {data.run.config.policy}" + (", timed by CUDA-graph replays" if data.run.config.cuda_graph else "")
        + (f", speedups averaged over {data.run.config.pairs_text()}{_pairs_taken(data)}"
           if max(data.run.config.pairs, data.run.config.max_pairs) > 1 else "")
        + (f", every problem cast to {data.run.config.precision} as KernelBench does (--precision)"
           if data.run.config.precision else ""),
        highlight=False,
        soft_wrap=True,
    )
    if PUBLISHED_COLUMN in result.columns:
        out.print(_published_line(result, manifest.gpu_name or manifest.cpu or "an unnamed device"),
                  highlight=False, soft_wrap=True)
    if not data.run.config.sandbox:
        out.print("[bold yellow]not sandboxed[/bold yellow] (--no-sandbox): candidates ran with the judge's privileges; "
                  "these scores are not proof against candidates that reach outside their process",
                  highlight=False, soft_wrap=True)
    if result.cpu_note:
        out.print(f"[yellow]note:[/yellow] {result.cpu_note}", highlight=False, soft_wrap=True)
    if not data.run.config.measure_time:
        out.print("not timed (--no-timing): correctness only, no speedups", highlight=False)
    out.print(
        f"coverage: {coverage.with_solution} of {coverage.problems} problems with a solution, "
        f"{coverage.evaluated} evaluated; {coverage.samples_evaluated} of {coverage.samples} samples evaluated",
        highlight=False,
        soft_wrap=True,
    )
    rate = Table("", "problems", "correct", "correct, kernels only", "correct, KernelBench-compatible",
                 *(f"geomean speedup ({c}){_mark(result)}" for c in result.columns),
                 title=f"correctness and speed ({result.confidence:.0%} bootstrap intervals over problems)")
    kernelbench = kernelbench_score(outcomes(data), result).groups  # counting what KernelBench's criterion accepts
    for key, group in result.groups.items():
        rate.add_row(_group_label(key), str(group.n_problems), estimate_text(group.correct_rate),
                     estimate_text(group.correct_rate_kernels_only), estimate_text(kernelbench[key].correct_rate),
                     *(estimate_text(group.geomean_speedup[c]) for c in result.columns))
    out.print(rate)
    for column in result.columns:
        groups = [_group_label(key) for key in result.groups]
        table = Table("p", *groups, *(f"{label}, kernels only" for label in groups),
                      title=f"fast_p over {column}; {KERNELS_ONLY}{_mark(result)}")
        for p in P_VALUES:
            table.add_row(f"{p:g}", *(estimate_text(group.fast_p[column][p]) for group in result.groups.values()),
                          *(estimate_text(group.fast_p_kernels_only[column][p]) for group in result.groups.values()))
        out.print(table)
        table = Table("p", *groups, title=f"conservative fast_p over {column}: a candidate counts only when its "
                      f"speedup interval's lower bound exceeds p{_mark(result)}")
        for p in P_VALUES:
            table.add_row(f"{p:g}", *(estimate_text(group.fast_p_conservative[column][p])
                                      for group in result.groups.values()))
        out.print(table)
        if result.ks:
            at_k = Table("p", *(f"k={k}" for k in result.ks),
                         title=f"fast_p@k over {column}, all problems{_mark(result)}")
            for p in P_VALUES:
                at_k.add_row(f"{p:g}", *(estimate_text(overall.fast_p_at_k[column][k][p]) for k in result.ks))
            out.print(at_k)
    if data.turns:
        _print_generation(out, data, result, by_turn)
    print_run_state(out, data, overall.statuses, coverage.evaluated, coverage.problems, items="problems",
                    judged="candidate")


def _print_generation(out: Console, data: RunData, result: Score, by_turn: dict[int, Score] | None) -> None:
    """fast_p after each turn (for a run with refinement turns), and what the requests used."""
    if data.run.config.turns > 1:
        by_turn = by_turn if by_turn is not None else score_by_turn(data, result.columns)
        for column in result.columns:
            table = Table("p", *(f"turn {t}" for t in by_turn), title=f"fast_p after each turn over {column}, "
                          f"all problems (a sample's best judged turn so far){_mark(result)}")
            table.add_row("correct", *(estimate_text(s.overall.correct_rate) for s in by_turn.values()))
            for p in P_VALUES:
                table.add_row(f"{p:g}", *(estimate_text(s.overall.fast_p[column][p]) for s in by_turn.values()))
            flips = same_solution_flips(data)
            if any(flips.values()):
                table.add_row("status flips, same solution", *(str(flips[t]) if t in flips else "-" for t in by_turn))
            out.print(table)
            if any(flips.values()):
                out.print(f"[yellow]{sum(flips.values())} samples changed status between turns with the same "
                          "solution[/yellow]: the judge's verdict changed on identical code, not the model's work",
                          highlight=False, soft_wrap=True)
    used = agent.usage(data.turns)
    out.print(
        f"generation: {data.run.config.solutions}, {used.requests} requests ({used.failed_requests} failed), "
        f"{used.input_tokens} input and {used.output_tokens} output tokens, {used.cost_text()}",
        highlight=False,
        soft_wrap=True,
    )


def compare_command(
    run_a: str = typer.Argument(..., help="The first run (A)."),
    run_b: str = typer.Argument(..., help="The second run (B); differences are B - A."),
    db: Path = STORE_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    force: bool = typer.Option(
        False, "--force", help="Compare runs whose settings differ, with the differences listed above the numbers."
    ),
    seed: int = SEED_OPTION,
    resamples: int = RESAMPLES_OPTION,
) -> None:
    """A, B and the paired difference B - A on the problems both runs share, per level and baseline
    column, and the problems whose status flipped; refuses runs whose settings differ unless --force."""
    with usage_errors(), Store(db, create=False) as store:
        data_a, data_b = store.load(run_a), store.load(run_b)
        if refusal := track_difference(data_a, data_b):
            raise UsageError(refusal)
        differences = mismatches(data_a, data_b)
        if differences and not force:
            raise UsageError(
                f"runs {run_a} and {run_b} were not measured alike, so their numbers do not compare:\n"
                + "\n".join(f"  {_mismatch_line(m)}" for m in differences)
                + "\n(--force compares them anyway, with these differences listed above the numbers)"
            )
    if data_a.run.config.track == REPO_TRACK:
        show_repo_comparison(console, data_a, data_b, differences, as_json, resamples=resamples, seed=seed)
        return
    columns = tuple(c for c in columns_of(data_a) if c in columns_of(data_b))
    result = compare_runs(outcomes(data_a), outcomes(data_b), columns, resamples=resamples, seed=seed,
                          devices=(data_a.run.config.device, data_b.run.config.device))
    if as_json:
        document = {"run_a": run_a, "run_b": run_b, "mismatches": [asdict(m) for m in differences], **result.to_dict()}
        typer.echo(json.dumps(finite(document), indent=2, default=str))
        return
    print_comparison(console, run_a, run_b, result, differences)


def _mismatch_line(mismatch: Mismatch) -> str:
    def side(values: tuple) -> str:
        return " then ".join(json.dumps(v, default=str, sort_keys=True) for v in values)

    return f"{mismatch.name}: A {side(mismatch.a)} | B {side(mismatch.b)}"


def print_comparison(out: Console, run_a: str, run_b: str, result: RunComparison, differences: list[Mismatch]) -> None:
    for mismatch in differences:
        out.print(f"[yellow]differs[/yellow] {_mismatch_line(mismatch)}", highlight=False, soft_wrap=True)
    if ALL not in result.groups:
        out.print(f"runs {run_a} and {run_b} share no problems", highlight=False)
        return
    out.print(f"A = {run_a}, B = {run_b}: {result.groups[ALL].n_problems} shared problems", highlight=False)
    if result.cpu_note:
        out.print(f"[yellow]note:[/yellow] {result.cpu_note}", highlight=False, soft_wrap=True)
    for label, ids in (("only in A", result.only_a), ("only in B", result.only_b),
                       ("changed between the runs (left out)", result.changed)):
        if ids:
            out.print(f"{label}: {', '.join(ids)}", highlight=False, soft_wrap=True)
    for column in result.columns:
        table = Table("group", "figure", "A", "B", "B - A", f"{result.confidence:.0%} interval",
                      title=f"over {column}: paired difference B - A{_mark(result)}")
        for key, group in result.groups.items():
            figures = [("correct", group.correct_rate)]
            figures += [(f"fast_{p:g}", group.fast_p[column][p]) for p in P_VALUES]
            for name, d in figures:
                table.add_row(_group_label(key) if name == "correct" else "", name, f"{d.a:.3f}", f"{d.b:.3f}",
                              f"{d.difference.value:+.3f}", f"[{d.difference.low:+.3f}, {d.difference.high:+.3f}]")
            table.add_section()
        out.print(table)
    if result.flipped:
        same = sum(flip.same_solution for flip in result.flipped)
        table = Table("problem", "A", "B", "solution", *(f"{c}: A / B / B - A{_mark(result)}" for c in result.columns),
                      title=f"{len(result.flipped)} problems whose status flipped"
                      + (f", {same} of them with the same solution (the judge changed, not the code)" if same else ""))
        for flip in result.flipped:
            table.add_row(flip.problem_id, flip.status_a, flip.status_b,
                          "same solution" if flip.same_solution else "changed",
                          *(_speedup_change(flip, column) for column in result.columns))
        out.print(table)


def _speedup_change(flip: Flip, column: str) -> str:
    a, b, change = flip.speedup_a.get(column), flip.speedup_b.get(column), flip.speedup_change(column)
    return " / ".join("-" if v is None else f"{v:{form}}" for v, form in ((a, ".2f"), (b, ".2f"), (change, "+.2f")))


def export_command(
    run: str = typer.Argument(..., help="Run name."),
    format: str = typer.Option("jsonl", "--format", "-f", metavar="|".join(export.FORMATS), help="What to write."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="File to write ('-': stdout) [default: RUN.jsonl, RUN.parquet, RUN.eval_results.json]."
    ),
    db: Path = STORE_OPTION,
) -> None:
    """Write a run's evaluations for other tools: JSON lines, Parquet, or KernelBench's eval_results.json."""
    with usage_errors():
        if format not in export.FORMATS:
            raise UsageError(f"unknown format {format!r}; choose from {', '.join(export.FORMATS)}")
        with Store(db, create=False) as store:
            data = store.load(run)
        default_name = {"jsonl": f"{run}.jsonl", "parquet": f"{run}.parquet", "kernelbench": f"{run}.eval_results.json"}
        target = output or Path(default_name[format])
        try:
            if format == "parquet":
                if str(target) == "-":
                    raise UsageError("parquet is binary: give --output a file")
                count = export.write_parquet(data, target)
            else:
                write = export.write_jsonl if format == "jsonl" else export.write_kernelbench
                if str(target) == "-":
                    count = write(data, sys.stdout)
                else:
                    with open(target, "w") as out:
                        count = write(data, out)
        except OSError as exc:  # a folder that does not exist or cannot be written, a full disk
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from exc
    if str(target) != "-":
        Console(stderr=True).print(f"wrote {count} evaluations of run {run} to {target}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("score", cls=HelpCommand)(score_command)
    app.command("compare", cls=HelpCommand)(compare_command)
    app.command("export", cls=HelpCommand)(export_command)
