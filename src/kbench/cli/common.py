"""What the command groups share: the store option, consoles, help in sections, and how usage errors end a command."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperCommand

from kbench.agents.prices import PriceError
from kbench.agents.prompts import PromptError
from kbench.agents.providers import ProviderError
from kbench.core.solution import SolutionError
from kbench.judge.processes.sandbox import SandboxUnavailable
from kbench.runs import export, runner
from kbench.runs.records import RETRIED_STATUSES
from kbench.runs.score import P_VALUES
from kbench.runs.store import DEFAULT_PATH, StoreError
from kbench.suite.problem import SIZES, ProblemError

# The sections of a long command's help (``kbench run -h``), in this order; an option names its
# own with rich_help_panel=... (typer's, which rich help would show as panels too).
PROBLEMS, SOLUTIONS, JUDGE, EXECUTION, STORE = "Problems", "Solutions or model", "Judge", "Execution", "Store"
SECTIONS = (PROBLEMS, SOLUTIONS, JUDGE, EXECUTION, STORE)
# What an option takes, as help and README write it: one spelling for every command.
DEVICE = "cpu|cuda|cuda:N"
SIZE = "auto|" + "|".join(SIZES)
POLICY = "lenient|strict|off"
# Every command that reads or writes a store takes it alike: --db or --store, or $KBENCH_DB.
STORE_FLAGS = ("--db", "--store")
STORE_OPTION = typer.Option(DEFAULT_PATH, *STORE_FLAGS, envvar="KBENCH_DB", metavar="PATH",
                            help="The store file (env KBENCH_DB).", rich_help_panel=STORE)
# The output options every judging command (eval, eval-patch, run) takes alike.
PROGRESS_HELP = "Show the step the judge is at, with the time elapsed, on stderr [default: on a terminal]."
PLAIN_HELP = "The steps as lines, for logs, never a live display (the default off a terminal)."
# Off a terminal (a log, CI, a pipe) tables get this width and lines are never wrapped.
LOG_WIDTH = 200


def make_console(stderr: bool = False) -> Console:
    """A console for stdout (or stderr) that wraps at the terminal's width on a
    terminal, and not at all off one: rich would otherwise cut log lines at 80
    columns, splitting dicts mid-value and the resume command across lines."""
    console = Console(stderr=stderr)
    return console if console.is_terminal else Console(stderr=stderr, width=LOG_WIDTH, soft_wrap=True)


class HelpCommand(TyperCommand):
    """A command whose help lists its options in sections (their ``rich_help_panel``,
    ``SECTIONS`` first) and says each default once: a help text's own ``[default: ...]``
    (for a default that depends, say on the device) replaces the one typer adds, in a
    single bracket with the value's range, at the end."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS] SOLUTION [PROBLEM] RUNS...``: arguments by name, not typer's ``{solution}``."""
        return [self.options_metavar or "[OPTIONS]",
                *(_argument_usage(p) for p in self.get_params(ctx) if p.param_type_name == "argument")]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        arguments, sections = [], {}
        for param in self.get_params(ctx):
            if param.param_type_name == "option" and param.metavar is None and not param.is_flag:
                param.metavar = METAVARS.get(param.name) or TYPE_METAVARS.get(param.display_type(ctx).strip("<>"), "X")
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":  # its name, and typer's help without its <type>
                arguments.append((_argument_name(param), record[1]))
            else:
                panel = getattr(param, "rich_help_panel", None) or "Options"
                sections.setdefault(panel, []).append((record[0], one_default(record[1])))
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        if len(sections) < 3:  # a short command's options (a store option and a few) in one list
            sections = {"Options": [record for records in sections.values() for record in records]}
        order = [*SECTIONS, *(name for name in sections if name not in SECTIONS and name != "Options"), "Options"]
        for name in order:
            if name in sections:
                with formatter.section(name if name == "Options" else f"{name} options"):
                    formatter.write_dl(sections[name])


def _argument_name(param: Any) -> str:
    return param.name.upper() + ("..." if param.nargs != 1 else "")


def _argument_usage(param: Any) -> str:
    return _argument_name(param) if param.required else f"[{_argument_name(param)}]"


# How the help names what an option takes (instead of typer's <int range>, <list[str]>...).
METAVARS = {"device": DEVICE, "size": SIZE, "policy": POLICY, "task": "TASK", "run": "NAME",
            "model": "PROVIDER/MODEL", "solutions": "DIR", "db": "PATH", "base_url": "URL",
            "template": "NAME|FILE", "refine_template": "NAME|FILE", "gpu": "NAME", "reasoning_effort": "LEVEL",
            "option": "KEY=VALUE", "agent_version": "VERSION", "agent_env": "NAME", "prices": "FILE",
            "env_file": "FILE", "api_key_env": "NAME", "output": "PATH", "records_file": "FILE"}
TYPE_METAVARS = {"int range": "N", "int": "N", "float range": "SECONDS", "float": "X", "path": "PATH", "file": "FILE",
                 "directory": "DIR", "str": "TEXT", "list[str]": "TEXT"}
OWN_DEFAULT = re.compile(r"\s*\[default: ([^\]]*)\]")
ADDED = re.compile(r"\s{2}\[([^\[\]]*)\]$")  # what typer appends: default, range, env var, required


def one_default(text: str) -> str:
    """An option's help with one bracket at its end: its own default, else typer's, and the rest."""
    added = ADDED.search(text)
    extras = added.group(1).split("; ") if added else []
    text = text[:added.start()] if added else text
    own = OWN_DEFAULT.search(text)
    if own:
        text = (text[:own.start()] + text[own.end():]).strip()
        extras = [f"default: {own.group(1)}", *(e for e in extras if not e.startswith("default: "))]
    return f"{text}  [{'; '.join(extras)}]" if extras else text


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


DECIDE_AT = "P,P,...|fast_p"
DECIDE_AT_HELP = ("With --max-pairs: more pairs only while a speedup's 95% interval still holds one of these "
                  "speedups (fast_p: the scores' p values, 0.5,0.8,1,1.5,2), so that a speedup clear of them "
                  "stops at --pairs.")


def decide_points(options: list[str] | None) -> tuple[float, ...]:
    """``--decide-at``'s speedups: numbers comma-separated or repeated, ``fast_p`` for the p values
    the scores count (above 0: at 0 fast_p counts correctness alone)."""
    points: list[float] = []
    for name in split_names(options):
        if name == "fast_p":
            points += [p for p in P_VALUES if p > 0]
            continue
        try:
            points.append(float(name))
        except ValueError:
            raise usage_error(f"--decide-at {name!r}: a speedup such as 1 or 1.5, or fast_p") from None
    return tuple(sorted(set(points)))


def print_run_state(out: Console, data: Any, statuses: dict[str, int], evaluated: int, total: int, *,
                    items: str, judged: str) -> None:
    """What a score's reader must know of the run beside it (both tracks): the outcomes, ``total``
    ``items`` of which only ``evaluated`` are done (the rest count as failures), failures outside
    the ``judged`` thing (retried), and sessions that ran in another environment than the first."""
    out.print("outcomes: " + counts_text(statuses), highlight=False)
    if evaluated < total:
        out.print(f"[yellow]incomplete:[/yellow] {total - evaluated} {items} not fully evaluated count as "
                  "failures; run the same `kbench run` again to finish")
    retried = sum(n for status, n in statuses.items() if status in RETRIED_STATUSES)
    if retried:
        out.print(f"[yellow]{retried} evaluations failed outside the {judged}[/yellow] "
                  f"({', '.join(sorted(RETRIED_STATUSES))}); `kbench run` with the same name retries them")
    first = data.sessions[0].manifest
    for session in data.sessions[1:]:
        changes = session.manifest.changes_from(first)
        if changes:
            described = "; ".join(f"{k}: {old} -> {new}" for k, (old, new) in changes.items())
            out.print(f"[yellow]session {session.number} ran in a different environment:[/yellow] {described}",
                      highlight=False)


def run_document(data: Any, complete: bool, scored: dict[str, Any]) -> dict[str, Any]:
    """A score as JSON with what it is a score of (both tracks): the run, whether every item was
    evaluated, its policy, the ``scored`` figures, the first session's manifest and what each
    later session ran with differently."""
    first = data.sessions[0].manifest
    return {
        "run": data.run.name,
        "created_at": data.run.created_at,
        "complete": complete,
        "policy": data.run.config.policy,
        **scored,
        "manifest": first.to_dict(),
        "sessions": [
            {"number": s.number, "started_at": s.started_at,
             "changes": {k: list(v) for k, v in s.manifest.changes_from(first).items()}}
            for s in data.sessions
        ],
    }
