"""Commands that judge: ``eval``, ``baseline`` and ``demo``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table

from kbench.cli import verdicts
from kbench.cli.common import (DECIDE_AT, DECIDE_AT_HELP, DEVICE, PLAIN_HELP, POLICY, PROGRESS_HELP, SIZE, HelpCommand,
                               decide_points, make_console, split_names, usage_error)
from kbench.cli.progress import evaluation_progress
from kbench.core.solution import Solution, SolutionError
from kbench.judge import DEFAULT_TIMEOUT, DEFAULT_TRIALS, evaluate, measure_baselines, resolve_device
from kbench.judge.trusted.baselines import COLUMNS, check_columns
from kbench.judge.trusted.compare import CRITERIA, DEFAULT_CRITERION
from kbench.judge.confirmation import Unconfirmed
from kbench.judge.guard import DEFAULT_POLICY, check_policy
from kbench.judge.processes.sandbox import SandboxUnavailable
from kbench.judge.protocol.timing import TimingSettings, check_settings
from kbench.suite import SUITE_DIR, find_problem, kernelbench
from kbench.suite.kernelbench import PRECISIONS
from kbench.suite.problem import DTYPES, Problem, ProblemError, resolve_size

CUDA_GRAPH_HELP = "Time replays of one captured CUDA graph, for problems made of many small kernel launches."
EXAMPLES_DIR = SUITE_DIR / "examples"
PRECISION_HELP = ("Cast the problem as KernelBench does: floating-point inputs and weights in fp16 or bf16, at the "
                  "file's sizes, tolerance 1e-2 (not its own --dtype variant).")
DEVICE_HELP = "Where to judge [default: cuda if present, else cpu]."
SIZE_HELP = "The problem's sizes (auto: small on a CPU)."
console = make_console()


def _checked_device(device: Optional[str]) -> str:
    try:
        return resolve_device(device)
    except ValueError as exc:
        raise usage_error(str(exc)) from exc


def eval_command(
    solution: Path = typer.Argument(..., help="Solution file defining ModelNew.", exists=True, dir_okay=False),
    problem: Optional[str] = typer.Option(None, "--problem", "-p", metavar="PROBLEM", help="A suite id "
                                          "(level1/relu), a problem file, or KernelBench's numbers in its folder "
                                          "(DIR/level1/19).  [required]"),
    problems: Optional[str] = typer.Option(None, "--problems", hidden=True),  # kbench run's spelling
    device: Optional[str] = typer.Option(None, metavar=DEVICE, help=DEVICE_HELP),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, min=1, help="Seconds for the candidate's whole evaluation."),
    size: str = typer.Option("auto", metavar=SIZE, help=SIZE_HELP),
    trials: int = typer.Option(DEFAULT_TRIALS, min=1, help="Correctness trials, each with a fresh seed."),
    timing: bool = typer.Option(True, "--timing/--no-timing", help="Time correct candidates and eager."),
    policy: str = typer.Option(DEFAULT_POLICY, metavar=POLICY, help="Guard policy: lenient (integrity rules "
                                "reject, style rules flag), strict (style rules reject too) or off."),
    dtype: Optional[str] = typer.Option(None, metavar="|".join(DTYPES), help="The problem's variant in this dtype "
                                        "(its KBENCH_DTYPES) [default: float32]."),
    precision: Optional[str] = typer.Option(None, metavar="|".join(PRECISIONS), help=PRECISION_HELP),
    correctness: str = typer.Option(DEFAULT_CRITERION, metavar="|".join(CRITERIA), help="How floating-point "
                                    "outputs are judged: truth (against the float64 truth, within the tolerance "
                                    "plus a multiple of the reference's own error) or kernelbench (within the "
                                    "tolerance of the reference's output, as KernelBench does): docs/correctness.md."),
    baseline: Optional[List[str]] = typer.Option(
        None, metavar="eager,compile,...", help=f"Baseline columns, comma-separated or repeated: {', '.join(COLUMNS)} "
        "[default: eager]."),
    cuda_graph: bool = typer.Option(False, "--cuda-graph/--no-cuda-graph", help=CUDA_GRAPH_HELP),
    pairs: int = typer.Option(1, min=1, help="Evaluations, each in a fresh pair of worker processes, whose speedups "
                              "the verdict averages (docs/timing.md)."),
    max_pairs: int = typer.Option(0, min=0, help="More evaluations, up to this many in all, until the speedup's 95% "
                                  "interval reaches at most 0.5% from it (0: --pairs only)."),
    decide_at: Optional[List[str]] = typer.Option(None, metavar=DECIDE_AT, help=DECIDE_AT_HELP),
    sandbox: bool = typer.Option(True, "--sandbox/--no-sandbox", help="Run the candidate in the OS sandbox "
                                 "(docs/trust.md); --no-sandbox is recorded in the verdict."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
    plain: bool = typer.Option(False, "--plain", help=PLAIN_HELP),
) -> None:
    """Judge one solution against one problem: verdict, errors, timings."""
    dev = _checked_device(device)
    problem = problem or problems
    if problem is None:
        raise usage_error("kbench eval needs --problem (-p): a suite id, a problem file or DIR/level1/19")
    try:
        resolve_size(size, dev)
        check_policy(policy)
        prob, dtype = _cast(find_problem(problem), dtype, precision)
        sol = Solution.from_file(solution)
        with evaluation_progress(progress, prob.id, plain) as shown:
            verdict = evaluate(
                prob, sol, dev, size=size, trials=trials, timeout=timeout, measure_time=timing, policy=policy,
                dtype=dtype, baselines=split_names(baseline) or ("eager",),
                timing=TimingSettings(cuda_graph=cuda_graph, pairs=pairs, max_pairs=max_pairs,
                                      decide_at=decide_points(decide_at)), sandbox=sandbox,
                progress=shown, correctness=correctness,
            )
    except (ProblemError, SolutionError, ValueError, SandboxUnavailable) as exc:
        raise usage_error(str(exc)) from exc
    except Unconfirmed as exc:  # not a usage error: the same command may reach a verdict on a quieter machine
        make_console(stderr=True).print(f"[red]no verdict:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(code=3) from exc
    if as_json:
        typer.echo(verdicts.verdict_json(verdict))
    else:
        verdicts.print_verdict(console, verdict)


def baseline_command(
    problems: List[str] = typer.Argument(..., help="Problem files or suite ids (level1/relu)."),
    baseline: Optional[List[str]] = typer.Option(
        None, metavar="compile,...", help=f"Columns, comma-separated or repeated: {', '.join(COLUMNS)} "
        "[default: compile]."),
    device: Optional[str] = typer.Option(None, metavar=DEVICE, help=DEVICE_HELP),
    size: str = typer.Option("auto", metavar=SIZE, help=SIZE_HELP),
    dtype: Optional[str] = typer.Option(None, metavar="|".join(DTYPES), help="The problems' variant in this dtype "
                                        "[default: float32]."),
    precision: Optional[str] = typer.Option(None, metavar="|".join(PRECISIONS), help=PRECISION_HELP),
    correctness: str = typer.Option(DEFAULT_CRITERION, metavar="|".join(CRITERIA), help="How floating-point "
                                    "outputs are judged: truth (against the float64 truth, within the tolerance "
                                    "plus a multiple of the reference's own error) or kernelbench (within the "
                                    "tolerance of the reference's output, as KernelBench does): docs/correctness.md."),
    cuda_graph: bool = typer.Option(False, "--cuda-graph/--no-cuda-graph", help=CUDA_GRAPH_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Measure compiled baseline columns ahead of a run and cache them (beside the build cache)."""
    dev = _checked_device(device)
    columns = split_names(baseline) or ("compile",)
    try:
        resolve_size(size, dev)
        columns = check_columns(list(columns), dev)  # eager first, then the columns asked for
        settings = check_settings(TimingSettings(cuda_graph=cuda_graph), dev)
        chosen = [find_problem(p) for p in problems]
        if chosen:
            casts = [_cast(p, dtype, precision) for p in chosen]
            chosen, dtype = [p for p, _ in casts], casts[0][1]
    except (ProblemError, ValueError) as exc:
        raise usage_error(str(exc)) from exc
    results = {}
    on_cpu = f", {verdicts.CPU_SHORT}" if dev == "cpu" else ""
    table = Table("problem", *[f"{c} ms" for c in columns], title="baselines, cached (x: over eager)",
                  caption="Timed on a CPU: these times say nothing about a GPU." if on_cpu else None)
    progress = make_console(stderr=True)
    for number, prob in enumerate(chosen, 1):
        try:
            results[prob.id] = measure_baselines(prob, dev, columns, size=size, dtype=dtype, timing=settings)
        except ProblemError as exc:
            results[prob.id] = {"error": str(exc)}
            progress.print(f"[{number}/{len(chosen)}] [yellow]{prob.id}[/yellow]: {exc}", highlight=False)
            continue
        measured = results[prob.id].items()
        # As each problem finishes: a long run that is stopped has still said what it measured.
        progress.print(f"[{number}/{len(chosen)}] {prob.id}: " + ", ".join(
            f"{column} {_column_cell(column, m, ' ms')}" for column, m in measured) + on_cpu, highlight=False)
        table.add_row(prob.id, *[_column_cell(column, m) for column, m in measured])
    if as_json:
        typer.echo(json.dumps(results, indent=2))
    else:
        console.print(table)


def _cast(problem: Problem, dtype: str | None, precision: str | None) -> tuple[Problem, str]:
    """The problem as judged, and its dtype: its own variant in ``dtype``, or cast as
    KernelBench does at ``precision`` (kbench.suite.kernelbench); ValueError for both."""
    if precision is None:
        return problem, dtype or "float32"
    if dtype is not None:
        raise ValueError("--precision casts the problem as KernelBench does; --dtype judges its own variant: give one")
    return kernelbench.at_precision(problem, precision), PRECISIONS[precision]


def _column_cell(column: str, measured: dict[str, float], unit: str = "") -> str:
    """A column's median, and for a compiled one its speedup over eager (below 1: slower)."""
    time_ms = f"{measured['runtime_ms']:.4g}{unit}"
    return time_ms if column == "eager" else f"{time_ms} ({measured['eager_ms'] / measured['runtime_ms']:.3f}x)"


def demo(
    device: Optional[str] = typer.Option(None, metavar=DEVICE, help=DEVICE_HELP),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, min=1, help="Seconds per evaluation."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
    plain: bool = typer.Option(False, "--plain", help=PLAIN_HELP),
) -> None:
    """Judge the bundled example solutions against their problems."""
    dev = _checked_device(device)
    judged = []
    for example in sorted(EXAMPLES_DIR.glob("*.py")):
        problem_id = f"level1/{example.stem}"
        console.print(Rule(f"{problem_id}  <-  examples/{example.name}"), width=min(console.width, 100))
        with evaluation_progress(progress, problem_id, plain) as shown:
            verdict = evaluate(problem_id, example, dev, timeout=timeout, progress=shown)
        verdicts.print_verdict(console, verdict)
        judged.append(verdict)
    console.print(verdicts.speedup_table(judged))


def register(app: typer.Typer) -> None:
    app.command("eval", cls=HelpCommand)(eval_command)
    app.command("baseline", cls=HelpCommand)(baseline_command)
    app.command(cls=HelpCommand)(demo)
