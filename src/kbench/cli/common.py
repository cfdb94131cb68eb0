"""What the command groups share: the store option, consoles, and how usage errors end a command."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import typer
from rich.console import Console
from rich.markup import escape

from kbench.agents.prices import PriceError
from kbench.agents.prompts import PromptError
from kbench.agents.providers import ProviderError
from kbench.core.solution import SolutionError
from kbench.judge.sandbox import SandboxUnavailable
from kbench.runs import export, runner
from kbench.runs.store import DEFAULT_PATH, StoreError
from kbench.suite.problem import ProblemError

DB_OPTION = typer.Option(DEFAULT_PATH, "--db", envvar="KBENCH_DB", help="The store file (env KBENCH_DB).")
# Off a terminal (a log, CI, a pipe) tables get this width and lines are never wrapped.
LOG_WIDTH = 200


def make_console(stderr: bool = False) -> Console:
    """A console for stdout (or stderr) that wraps at the terminal's width on a
    terminal, and not at all off one: rich would otherwise cut log lines at 80
    columns, splitting dicts mid-value and the resume command across lines."""
    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=LOG_WIDTH, soft_wrap=True)


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
    make_console(stderr=True).print(f"[red]error:[/red] {escape(message)}", highlight=False)  # '[x]' is no markup
    return typer.Exit(code=2)


def counts_text(counts: dict[str, int]) -> str:
    """Verdict counts by status, the most frequent first."""
    return "  ".join(f"{status} {n}" for status, n in sorted(counts.items(), key=lambda item: -item[1]))


def split_names(options: list[str] | None) -> tuple[str, ...]:
    """Names given comma-separated, repeated, or both (``--baseline eager,compile --baseline cudagraphs``)."""
    return tuple(name.strip() for option in options or [] for name in option.split(",") if name.strip())
