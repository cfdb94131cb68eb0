"""What the command groups share: the store option and how usage errors end a command."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import typer
from rich.console import Console

from kbench.agents.prices import PriceError
from kbench.agents.prompts import PromptError
from kbench.agents.providers import ProviderError
from kbench.core.solution import SolutionError
from kbench.judge.sandbox import SandboxUnavailable
from kbench.runs import export, runner
from kbench.runs.store import DEFAULT_PATH, StoreError
from kbench.suite.problem import ProblemError

DB_OPTION = typer.Option(DEFAULT_PATH, "--db", envvar="KBENCH_DB", help="The store file (env KBENCH_DB).")


class UsageError(Exception):
    """A usage error: reported on stderr with exit status 2."""


@contextmanager
def usage_errors() -> Iterator[None]:
    try:
        yield
    except (UsageError, StoreError, runner.RunError, ProblemError, SolutionError, export.ExportError, ProviderError,
            PromptError, PriceError, ValueError, SandboxUnavailable) as exc:
        raise usage_error(str(exc)) from exc


def usage_error(message: str) -> typer.Exit:
    """Say what is wrong on stderr; the Exit to raise ends the command with status 2."""
    Console(stderr=True).print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code=2)


def counts_text(counts: dict[str, int]) -> str:
    """Verdict counts by status, the most frequent first."""
    return "  ".join(f"{status} {n}" for status, n in sorted(counts.items(), key=lambda item: -item[1]))
