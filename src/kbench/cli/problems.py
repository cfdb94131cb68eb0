"""``kbench problems list`` and ``kbench problems show``: the bundled suite, and any one problem file."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

import torch
import typer
from rich.syntax import Syntax
from rich.table import Table

from kbench.cli.common import HelpCommand, make_console, usage_errors
from kbench.judge.trusted.compare import tolerance_for
from kbench.suite import SUITE_DIR, find_problem, suite_problems
from kbench.suite.problem import Problem

console = make_console()


def problems_list(
    level: Optional[str] = typer.Option(None, metavar="N|levelN", help="Only this level (1 or level1, as --problems "
                                        "names it)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
) -> None:
    """List the bundled problems."""
    with usage_errors():
        level = parse_level(level)
    problems = suite_problems(level)
    if as_json:
        rows = [{"id": p.id, "level": p.level, "name": p.name, "path": str(p.path)} for p in problems]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not problems:
        levels = sorted({p.level for p in suite_problems() if p.level is not None})
        make_console(stderr=True).print(f"no bundled problem of level {level}; the suite has levels "
                                        f"{', '.join(map(str, levels))}", highlight=False)
        return
    table = Table("id", "level", "name", title=f"{len(problems)} problems in {SUITE_DIR}")
    for p in problems:
        table.add_row(p.id, str(p.level), p.name)
    console.print(table)


def parse_level(text: str | None) -> int | None:
    """A level as ``--level`` takes it: ``1`` or ``level1``; ValueError otherwise."""
    if text is None:
        return None
    match = re.fullmatch(r"(?:level)?\s*(\d+)", text.strip(), flags=re.IGNORECASE)
    if not match:
        raise ValueError(f"--level {text!r}: a level number (1) or name (level1)")
    return int(match.group(1))


def problems_show(
    problem: str = typer.Argument(..., help="A suite id (level1/relu) or a problem file."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the source included)."),
) -> None:
    """One problem: its sizes, dtypes, tolerances, what it requires, and its source."""
    with usage_errors():
        found = find_problem(problem)
    described = describe(found)
    if as_json:
        typer.echo(json.dumps({**described, "source": found.source}, indent=2))
        return
    console.print(f"[bold]{found.id}[/bold]  {found.name} (level {found.level if found.level is not None else '-'})",
                  highlight=False)
    for key in ("path", "sha256"):
        console.print(f"  {key}: {described[key]}", highlight=False, markup=False)
    console.print(f"  dtypes: {', '.join(found.dtypes)}" + (f"; requires {', '.join(found.requires)}"
                                                             if found.requires else ""), highlight=False)
    for size, values in described["sizes"].items():
        shown = ", ".join(f"{name}={value}" for name, value in values.items()) or "as written"
        console.print(f"  size {size}: {shown}", highlight=False, markup=False)
    for dtype, tolerance in described["tolerance"].items():
        console.print(f"  tolerance {dtype}: atol {tolerance['atol']:g}, rtol {tolerance['rtol']:g}", highlight=False)
    console.print()
    console.print(Syntax(found.source, "python", line_numbers=True, word_wrap=True) if console.is_terminal
                  else found.source, highlight=False, markup=False)


def describe(problem: Problem) -> dict[str, Any]:
    """What ``problems show`` prints, as JSON values: the tolerance of each dtype
    the problem may be judged in (its own, else the judge's default)."""
    sizes = {"default": problem.written_sizes(), "small": problem.small}
    sizes.update({f"default in {dtype}": values for dtype, values in problem.dtype_sizes.items()})
    return {
        "id": problem.id,
        "name": problem.name,
        "level": problem.level,
        "path": str(problem.path),
        "sha256": problem.sha256,
        "dtypes": list(problem.dtypes),
        "requires": list(problem.requires),
        "sizes": sizes,
        "tolerance": {dtype: tolerance_for(getattr(torch, dtype), problem.tolerance) for dtype in problem.dtypes},
    }


def register(app: typer.Typer) -> None:
    problems_app = typer.Typer(no_args_is_help=True, help="The bundled problem suite, and any problem file.")
    problems_app.command("list", cls=HelpCommand)(problems_list)
    problems_app.command("show", cls=HelpCommand)(problems_show)
    app.add_typer(problems_app, name="problems")
