"""``kbench audit``: check that problems are sound (see docs/audit.md)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.table import Table

from kbench.audit import DEFAULT_TIMEOUT, FLAGS, audit_problems, broken_record
from kbench.cli.common import DEVICE, SIZE, HelpCommand, make_console
from kbench.judge import resolve_device
from kbench.suite import SUITE_DIR, find_problem, suite_problems
from kbench.suite.problem import DTYPES, Problem, ProblemError, load_problem, resolve_size


class UsageError(Exception):
    pass


def collect(args: list[str]) -> list[Problem | dict[str, Any]]:
    """Problems named by suite id, file or directory (every ``*.py`` below it).

    A file that exists but cannot be read as a problem stays in the list as a
    ``broken`` record (it was asked for); a name that is nothing is a UsageError.
    """
    if not args:
        return list(suite_problems())
    found: list[Problem | dict[str, Any]] = []
    for arg in args:
        path = Path(arg)
        if not path.exists() and (SUITE_DIR / arg).is_dir():
            path = SUITE_DIR / arg
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.py") if p.name != "__init__.py")
            if not files:
                raise UsageError(f"no problem files (*.py) in {arg}")
            root = path.resolve().parent
            found += [_read(f, f.resolve().relative_to(root).with_suffix("").as_posix()) for f in files]
        elif path.is_file():
            found.append(_read(path, None))
        else:
            try:
                found.append(find_problem(arg))
            except ProblemError as exc:
                raise UsageError(str(exc)) from exc
    return found


def _read(path: Path, problem_id: str | None) -> Problem | dict[str, Any]:
    resolved = path.resolve()
    if problem_id is None:
        inside = resolved.is_relative_to(SUITE_DIR.resolve())
        problem_id = resolved.relative_to(SUITE_DIR.resolve()).with_suffix("").as_posix() if inside else path.stem
    try:
        return load_problem(path, problem_id=problem_id)
    except ProblemError as exc:
        return broken_record(resolved, problem_id, "", "", str(exc))


def recorded(path: Path, device: str, size: str, dtype: str) -> dict[str, dict[str, Any]]:
    """The records of a ``--records`` file that a new audit can keep, by problem id and
    content hash: same device, size and dtype, neither ``broken`` nor skipped (those
    are tried again). Lines that do not parse (one cut short by a killed audit) are
    left alone."""
    if not path.exists():
        return {}
    kept = {}
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if (isinstance(record, dict) and record.get("sha256") and not record.get("skipped")
                and "broken" not in record.get("flags", ["broken"])
                and (record.get("device"), record.get("size"), record.get("dtype")) == (device, size, dtype)):
            kept[(record.get("id"), record["sha256"])] = record
    return kept


def _ends_mid_line(path: Path) -> bool:
    """Whether the file's last line was cut short (by a killed audit); reads one byte."""
    with path.open("rb") as f:
        if f.seek(0, os.SEEK_END) == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


def _resume_key(item: Problem | dict[str, Any]) -> tuple[str, str] | None:
    return (item.id, item.sha256) if isinstance(item, Problem) else None


def _finite(obj: Any) -> Any:
    """JSON has no infinities: they become null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def _mib(n: int | None) -> str:
    return "" if n is None else f"{n / 2**20:.1f}"


def print_records(console: Console, records: list[dict[str, Any]]) -> None:
    table = Table("problem", "flags", "ref. error / tol.", "eager ms", "memory MiB", title="kbench audit")
    for r in records:
        fraction = (r.get("reference_error") or {}).get("tolerance_fraction")
        table.add_row(
            r["id"],
            _verdict_cell(r),
            "" if fraction is None else f"{fraction:.3g}",
            "" if r.get("eager_ms") is None else f"{r['eager_ms']:.4g}",
            _mib(r.get("memory_bytes")),
        )
    console.print(table)
    for r in records:
        for flag in r["flags"]:
            reason = r["reasons"][flag].strip().splitlines()[0] if r["reasons"].get(flag) else ""
            console.print(f"{r['id']}: [red]{flag}[/red]: {reason}", highlight=False)
    for r in records:
        if r.get("skipped"):
            console.print(f"{r['id']}: [yellow]skipped[/yellow]: {r['skipped']}", highlight=False)
    flagged = sum(1 for r in records if r["flags"])
    skipped = sum(1 for r in records if r.get("skipped"))
    console.print(f"{len(records) - skipped} problem(s) audited, {flagged} flagged, {skipped} skipped")


def _verdict_cell(record: dict[str, Any]) -> str:
    if record.get("skipped"):
        return "[yellow]skipped[/yellow]"
    return "[red]" + ", ".join(record["flags"]) + "[/red]" if record["flags"] else "[green]sound[/green]"


def register(app: typer.Typer) -> None:
    @app.command("audit", cls=HelpCommand)
    def audit_command(
        problems: Optional[List[str]] = typer.Argument(
            None, help="Suite ids, problem files or directories of them [default: the whole suite]."
        ),
        device: Optional[str] = typer.Option(None, metavar=DEVICE, help="Where to audit [default: cuda if present, "
                                             "else cpu]."),
        size: str = typer.Option("auto", metavar=SIZE, help="The problems' sizes (auto: small on a CPU)."),
        timeout: float = typer.Option(DEFAULT_TIMEOUT, min=1, help="Seconds per problem."),
        jobs: int = typer.Option(1, min=1, help="Problems audited at once, each in its own process (on a GPU they "
                                 "load side by side and check and time one at a time)."),
        dtype: str = typer.Option("float32", metavar="|".join(DTYPES), help="Audit the problems' variants in this "
                                  "dtype (KBENCH_DTYPES); problems without one are skipped."),
        as_json: bool = typer.Option(False, "--json", help="Print a JSON list of records."),
        records_file: Optional[Path] = typer.Option(
            None, "--records", dir_okay=False, help="A JSON-lines file each record is appended to as it finishes; "
            "a problem already recorded there (same file content, size, dtype and device) is not audited again."),
        fail_on: str = typer.Option(
            "flagged", "--fail-on", metavar="flagged|never|FLAG[,FLAG]", help="Exit 1 when a problem has a flag "
            f"(flagged; broken included), never, or only for these flags ({', '.join(FLAGS)})."),
    ) -> None:
        """Check problems for soundness: zeros or constants that pass, ignored inputs or
        weights, nondeterminism, tolerance, runtime and memory. Exit 1 when a problem is
        flagged or broken (--fail-on), 2 for usage errors."""
        errors = make_console(stderr=True)
        try:
            dev = resolve_device(device)
            sz = resolve_size(size, dev)
            if dtype not in DTYPES:
                raise ValueError(f"unknown dtype {dtype!r}; choose from {', '.join(DTYPES)}")
            failing = failing_flags(fail_on)
            items = collect(problems or [])
        except (ValueError, UsageError) as exc:
            errors.print(f"[red]error:[/red] {exc}", highlight=False)
            raise typer.Exit(code=2) from exc
        done = [0]

        def progress(record: dict[str, Any]) -> None:
            done[0] += 1
            flags = "skipped" if record.get("skipped") else ", ".join(record["flags"]) or "sound"
            errors.print(f"[{done[0]}/{len(items)}] {record['id']}: {flags}", highlight=False)

        kept = recorded(records_file, dev, sz, dtype) if records_file else {}
        todo = [item for item in items if _resume_key(item) not in kept]
        if len(todo) < len(items):
            errors.print(f"{len(items) - len(todo)} problem(s) already recorded in {records_file}", highlight=False)
        sink = records_file.open("a") if records_file else None
        if sink and _ends_mid_line(records_file):
            sink.write("\n")  # after a line cut short by a killed audit, not on it

        def finished(record: dict[str, Any]) -> None:
            if sink:
                sink.write(json.dumps(_finite(record)) + "\n")
                sink.flush()
            progress(record)

        try:
            fresh = iter(audit_problems(todo, dev, sz, jobs=jobs, timeout=timeout, dtype=dtype, on_done=finished))
        finally:
            if sink:
                sink.close()
        records = [kept[key] if (key := _resume_key(item)) in kept else next(fresh) for item in items]
        if as_json:
            typer.echo(json.dumps(_finite(records), indent=2))
        else:
            print_records(make_console(), records)
        failed = [r["id"] for r in records if failing.intersection(r.get("flags", ()))]
        if failed:
            errors.print(f"{len(failed)} problem(s) with a flag --fail-on {fail_on} fails on: "
                         f"{', '.join(failed[:10])}{', ...' if len(failed) > 10 else ''}", highlight=False)
            raise typer.Exit(code=1)


def failing_flags(fail_on: str) -> frozenset[str]:
    """The flags that make ``kbench audit`` exit 1: every flag (``flagged``), none
    (``never``), or those named; ValueError for a name that is no flag."""
    if fail_on.strip() == "flagged":
        return frozenset(FLAGS)
    if fail_on.strip() == "never":
        return frozenset()
    named = frozenset(part.strip() for part in fail_on.split(",") if part.strip())
    unknown = sorted(named - set(FLAGS))
    if unknown or not named:
        raise ValueError(f"--fail-on {fail_on!r}: flagged, never, or flags among {', '.join(FLAGS)}")
    return named
