"""The repository track's commands: ``tasks list``, ``tasks show``, ``tasks audit`` and ``eval-patch``.

``eval-patch`` exits as ``eval`` does: 0 whenever a verdict was reached
(whatever it says), 2 for a usage error (no such task or patch file, an
unusable task file, an unknown device), 3 when two evaluations raised
different suspicions (no verdict). ``tasks audit`` exits 1 when a task fails
a check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from kbench.cli import verdicts
from kbench.cli.common import PLAIN_HELP, PROGRESS_HELP, HelpCommand, make_console, usage_error
from kbench.cli.progress import evaluation_progress
from kbench.core.verdict import Verdict
from kbench.judge import DEFAULT_TIMEOUT, DEFAULT_TRIALS, resolve_device
from kbench.judge.confirmation import Unconfirmed
from kbench.judge.guard import DEFAULT_POLICY
from kbench.judge.processes.sandbox import SandboxUnavailable
from kbench.repo import Patch, PatchFileError, Task, TaskError, evaluate_patch, find_task, suite_tasks
from kbench.repo.audit import CHECKS, audit_tasks
from kbench.repo.expert import NOT_MEANINGFUL_ON_CPU, SOLVED_FRACTION, on_cpu
from kbench.repo.task import TASKS_DIR
from kbench.suite.problem import resolve_size

console = make_console()
DIR_HELP = f"A folder of tasks (<repository>/<task>/task.toml) [default: the bundled ones, {TASKS_DIR}]."


def tasks_list(
    folder: Optional[Path] = typer.Option(None, "--dir", help=DIR_HELP, file_okay=False),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
) -> None:
    """List the tasks: id, title, kind, repository and pinned commit."""
    try:
        tasks = suite_tasks(folder)
    except TaskError as exc:
        raise usage_error(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps([_summary(t) for t in tasks], indent=2))
        return
    if not tasks:
        make_console(stderr=True).print(f"no tasks in {folder or TASKS_DIR}", highlight=False)
        return
    table = Table("id", "title", "kind", "repository", "commit", "tests (visible/hidden)",
                  title=f"{len(tasks)} tasks in {folder or TASKS_DIR}")
    for t in tasks:
        table.add_row(t.id, t.title, t.kind, t.repository.source.name, t.repository.commit[:12],
                      f"{len(t.visible_tests)}/{len(t.hidden_tests)}")
    console.print(table)


def _summary(task: Task) -> dict[str, Any]:
    return {"id": task.id, "title": task.title, "kind": task.kind, "path": str(task.path), "sha256": task.sha256,
            "repository": str(task.repository.source), "commit": task.repository.commit}


def tasks_show(
    task: str = typer.Argument(..., help="A task id (tinylm/fused-rmsnorm) or the path of a task.toml."),
    folder: Optional[Path] = typer.Option(None, "--dir", help=DIR_HELP, file_okay=False),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """One task: its statement, repository and commit, the paths a patch may change, its tests and workload."""
    try:
        found = find_task(task, folder)
    except TaskError as exc:
        raise usage_error(str(exc)) from exc
    described = {
        **_summary(found),
        "statement": found.statement,
        "allowed": list(found.allowed),
        "visible_tests": list(found.visible_tests),
        "hidden_tests": list(found.hidden_tests),
        "tests_timeout_s": found.tests_timeout,
        "workload": str(found.workload_path),
        "edge_cases": str(found.edge_cases_path) if found.edge_cases_path else None,
        "tolerance": found.tolerance,
        "expert_patch": str(found.expert_patch) if found.expert_patch else None,
        "broken_patch": str(found.broken_patch) if found.broken_patch else None,
    }
    if as_json:
        typer.echo(json.dumps(described, indent=2))
        return
    console.print(f"[bold]{escape(found.id)}[/bold]  {escape(found.title)}", highlight=False)
    for key in ("kind", "path", "sha256", "repository", "commit", "allowed", "visible_tests", "hidden_tests",
                "tests_timeout_s", "workload", "edge_cases", "tolerance", "expert_patch", "broken_patch"):
        value = described[key]
        shown = ", ".join(value) if isinstance(value, list) else value
        if shown not in (None, {}, ""):
            console.print(f"  {key}: {shown}", highlight=False, markup=False)
    console.print()
    console.print(found.statement.strip(), highlight=False, markup=False)


def tasks_audit(
    tasks: Optional[List[str]] = typer.Argument(None, help="Task ids or task.toml paths [default: every task]."),
    folder: Optional[Path] = typer.Option(None, "--dir", help=DIR_HELP, file_okay=False),
    device: Optional[str] = typer.Option(None, help="cpu, cuda or cuda:N [default: cuda if present, else cpu]"),
    size: str = typer.Option("auto", help="auto (small on a CPU), default or small."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, min=1, help="Seconds for each workload evaluation."),
    sandbox: bool = typer.Option(True, "--sandbox/--no-sandbox", help="Run tests and patches in the OS sandbox."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of records."),
) -> None:
    """Check tasks: the base passes its tests, the workload is sound, the broken patch fails a
    hidden test, the expert patch is correct (on a GPU: at least 1.2x). Exit 1 if a task fails."""
    errors = make_console(stderr=True)
    try:
        dev = resolve_device(device)
        sz = resolve_size(size, dev)
        chosen = [find_task(t, folder) for t in tasks] if tasks else suite_tasks(folder)
    except (TaskError, ValueError) as exc:
        raise usage_error(str(exc)) from exc
    if not chosen:
        raise usage_error(f"no tasks in {folder or TASKS_DIR}")

    def done(record: dict[str, Any]) -> None:
        failed = [name for name, check in record["checks"].items() if not check["ok"]]
        said = f"[red]fails {', '.join(failed)}[/red]" if failed else "[green]sound[/green]"
        errors.print(f"{escape(record['id'])}: {said}", highlight=False)
        for name in failed:  # now, not only in the final table: a run cut short still says why
            errors.print(f"  {name}: {record['checks'][name]['detail']}", highlight=False, markup=False)

    try:
        records = audit_tasks(chosen, dev, sz, sandbox=sandbox, timeout=timeout, on_done=done,
                              progress=lambda step: errors.print(f"  {step}", highlight=False, markup=False))
    except SandboxUnavailable as exc:
        raise usage_error(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps(records, indent=2, default=str))
    else:
        table = Table("task", *(c.replace("_", " ") for c in CHECKS), title="kbench tasks audit")
        for r in records:
            table.add_row(r["id"], *(("[green]ok[/green]" if r["checks"][c]["ok"] else "[red]fails[/red]")
                                     if c in r["checks"] else "-" for c in CHECKS))
        console.print(table)
        for r in records:
            for name, check in r["checks"].items():
                console.print(f"{r['id']}: {name}: {check['detail']}", highlight=False, markup=False)
            for note in r["notes"]:
                console.print(f"{r['id']}: note: {note}", highlight=False, markup=False)
    if not all(r["ok"] for r in records):
        raise typer.Exit(code=1)


def eval_patch(
    patch: Path = typer.Argument(..., help="The patch file (a unified diff, as git diff writes it)."),
    task: str = typer.Option(..., "--task", "-t", help="A task id (tinylm/fused-rmsnorm) or a task.toml path."),
    device: Optional[str] = typer.Option(None, help="cpu, cuda or cuda:N [default: cuda if present, else cpu]"),
    timeout: float = typer.Option(DEFAULT_TIMEOUT, min=1, help="Seconds for the workload's evaluation."),
    size: str = typer.Option("auto", help="auto (small on a CPU), default or small."),
    trials: int = typer.Option(DEFAULT_TRIALS, min=1, help="Correctness trials of the workload."),
    timing: bool = typer.Option(True, "--timing/--no-timing", help="Time a correct patch against the base."),
    hidden: bool = typer.Option(True, "--hidden/--visible-only", help="Run the hidden tests too."),
    policy: str = typer.Option(DEFAULT_POLICY, help="Guard policy: lenient or strict (the same for a patch: "
                                "its integrity rules reject, no style rule applies) or off."),
    sandbox: bool = typer.Option(True, "--sandbox/--no-sandbox", help="Run the patched code in the OS sandbox "
                                 "(docs/trust.md); --no-sandbox is recorded in the verdict."),
    expert: bool = typer.Option(True, "--expert/--no-expert", help="Time the expert patch beside the patch: "
                                "its fraction of the expert's speedup."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help=PROGRESS_HELP),
    plain: bool = typer.Option(False, "--plain", help=PLAIN_HELP),
) -> None:
    """Judge a patch to a repository task: paths, tests (visible and hidden), the workload against the base."""
    try:
        dev = resolve_device(device)
        resolve_size(size, dev)
        found = find_task(task)
        read = Patch.from_file(patch)
        if not read.text.strip():
            raise ValueError(f"patch file {patch} is empty: nothing to judge (a patch is a unified diff, as git diff "
                             "writes it)")
        with evaluation_progress(progress, found.id, plain) as shown:
            verdict = evaluate_patch(found, read, dev, size=size, trials=trials, timeout=timeout,
                                     measure_time=timing, hidden_tests=hidden, policy=policy, sandbox=sandbox,
                                     expert=expert, progress=shown)
    except (TaskError, PatchFileError, ValueError, SandboxUnavailable) as exc:
        raise usage_error(str(exc)) from exc
    except Unconfirmed as exc:
        make_console(stderr=True).print(f"[red]no verdict:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(code=3) from exc
    if as_json:
        typer.echo(verdicts.verdict_json(verdict))
    else:
        print_patch_verdict(verdict)


def print_patch_verdict(verdict: Verdict) -> None:
    """The verdict as ``eval`` prints one, and the comparison with the expert patch."""
    verdicts.print_verdict(console, verdict)
    expert = verdict.expert
    if not expert:
        return
    if expert.get("speedup") is None:
        console.print(f"  expert patch: {expert.get('measured')}", highlight=False, markup=False)
        return
    low, high = expert["fraction_interval"]
    console.print(f"  expert patch: {expert['speedup']:.4g}x over the base ({expert['measured']})", highlight=False,
                  markup=False)
    if on_cpu(verdict.device):
        console.print(f"  this patch: {expert['fraction']:.3g} of the expert's speedup, {NOT_MEANINGFUL_ON_CPU}",
                      highlight=False, markup=False)
        return
    console.print(f"  this patch: {expert['fraction']:.3g} of the expert's speedup (95% interval "
                  f"{low:.3g}-{high:.3g}); solved: {'yes' if expert['solved'] else 'no'} (the interval's lower "
                  f"bound must reach {SOLVED_FRACTION:g} of it)", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    tasks_app = typer.Typer(no_args_is_help=True, help="The repository-maintenance track's tasks.")
    tasks_app.command("list", cls=HelpCommand)(tasks_list)
    tasks_app.command("show", cls=HelpCommand)(tasks_show)
    tasks_app.command("audit", cls=HelpCommand)(tasks_audit)
    app.add_typer(tasks_app, name="tasks")
    app.command("eval-patch", cls=HelpCommand)(eval_patch)
