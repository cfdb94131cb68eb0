"""Progress displays: a run's (a bar on a terminal, a line per evaluation off one) and one
evaluation's (``kbench eval``, ``kbench demo``: the step the judge is at, with the time
elapsed), on the console given, never mixed into what a command prints as its result."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kbench.cli import verdicts
from kbench.cli.common import counts_text, make_console
from kbench.runs.records import RETRIED_STATUSES, EvaluationRecord, TurnRecord
from kbench.runs.score import CPU_MARK

# A live display redraws from a thread of the judge's process: seldom, so that it
# seldom holds the interpreter while the judge stamps a call on its clock.
REFRESHES_PER_SECOND = 4


@contextmanager
def evaluation_progress(wanted: Optional[bool], label: str,
                        plain: bool = False) -> Iterator[Optional["EvaluationProgress"]]:
    """One evaluation's progress on stderr (``eval``, ``eval-patch``, ``demo``): on a terminal unless
    --no-progress, off one only with --progress (or --plain); as lines with --plain."""
    errors = make_console(stderr=True)
    if not (wanted if wanted is not None else errors.is_terminal or plain):
        yield None
        return
    with EvaluationProgress(errors, label, plain=plain) as shown:
        yield shown


class EvaluationProgress:
    """One evaluation's steps as the judge tells them (``evaluate(progress=...)``):
    on a terminal a spinner with the step and the time elapsed, left behind by
    nothing once done; off one (or ``plain``) a line per step with the seconds elapsed, for logs."""

    def __init__(self, console: Console, label: str, plain: bool = False):
        self.console, self.label, self.start = console, label, time.monotonic()
        self.live: Progress | None = None
        if console.is_terminal and not plain:
            self.live = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                                 console=console, transient=True, refresh_per_second=REFRESHES_PER_SECOND)
            self.task = self.live.add_task(label, total=None)

    def __enter__(self) -> "EvaluationProgress":
        if self.live is not None:
            self.live.start()
        return self

    def __call__(self, step: str) -> None:
        if self.live is not None:
            self.live.update(self.task, description=f"{self.label}: {step}")
        else:
            self.console.print(f"[{time.monotonic() - self.start:6.1f}s] {self.label}: {step}", highlight=False,
                               markup=False)

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()


def _counts(records: list[EvaluationRecord]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        counts[record.status] = counts.get(record.status, 0) + 1
    return counts


def _speedups(speedup: dict[str, float | None], verdict: dict[str, Any] | None) -> str:
    shown = ", ".join(f"{s:.3g}x {column}" for column, s in speedup.items() if s is not None)
    if shown and (verdict or {}).get("device") == "cpu":
        shown += f", {CPU_MARK}"
    return shown


def _outcome_text(status: str, reason: str, speedup: dict[str, float | None], verdict: dict[str, Any] | None,
                  turn: int | None = None) -> str:
    """The status, with the speedups of a correct sample or the first line of
    the reason of any other: what went wrong, without opening the store."""
    shown = status + (f" at turn {turn}" if turn is not None else "")
    if speedups := _speedups(speedup, verdict):
        return f"{shown} ({speedups})"
    return f"{shown}: {verdicts.one_line(reason)}" if status != "correct" and reason else shown


def _record_text(record: EvaluationRecord) -> str:
    return f"{record.problem_id} #{record.sample_index}: " + _outcome_text(
        record.status, record.reason, record.speedup, record.verdict, record.turn)


def _turn_text(record: TurnRecord) -> str:
    return f"{record.problem_id} #{record.sample_index} turn {record.turn}: " + _outcome_text(
        record.status or "", record.reason, record.speedup, record.verdict)


class BarProgress:
    """A progress bar: the sample being judged, samples done, verdicts so far, time
    left (and a line per turn of a run with refinement turns)."""

    def __init__(self, console: Console, show_turns: bool = False):
        self.show_turns = show_turns
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[verdicts]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=REFRESHES_PER_SECOND,
        )

    def started(self, total: int, done: list[EvaluationRecord]) -> None:
        self.counts = _counts(done)
        self.task = self.progress.add_task("evaluating", total=total, completed=len(done),
                                           verdicts=counts_text(self.counts))
        self.progress.start()

    def turn_finished(self, record: TurnRecord) -> None:
        if self.show_turns:
            self.progress.console.print(_turn_text(record), highlight=False, markup=False)

    def evaluating(self, problem_id: str, sample_index: int, turn: int | None = None) -> None:
        """The bar names the sample being judged now."""
        turn_text = f" turn {turn}" if turn is not None else ""
        self.progress.update(self.task, description=f"{problem_id} #{sample_index}{turn_text}", refresh=True)

    def finished(self, record: EvaluationRecord) -> None:
        self.counts[record.status] = self.counts.get(record.status, 0) + 1
        self.progress.console.print(_record_text(record), highlight=False, markup=False)
        self.progress.update(self.task, advance=1, verdicts=counts_text(self.counts))

    def close(self) -> None:
        self.progress.stop()


class PlainProgress:
    """One line per evaluation, with counts and an estimate of the time left."""

    def __init__(self, console: Console, show_turns: bool = False):
        self.console = console
        self.show_turns = show_turns

    def turn_finished(self, record: TurnRecord) -> None:
        if self.show_turns:
            self.console.print("  " + _turn_text(record), highlight=False, markup=False, soft_wrap=True)

    def started(self, total: int, done: list[EvaluationRecord]) -> None:
        self.total, self.done, self.already, self.start = total, len(done), len(done), time.monotonic()
        self.console.print(
            f"{total - self.done} to evaluate; {self.done} recorded already ({counts_text(_counts(done)) or 'none'})",
            highlight=False,
            soft_wrap=True,
        )

    def finished(self, record: EvaluationRecord) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.start
        left = elapsed / (self.done - self.already) * (self.total - self.done)
        self.console.print(
            f"[{self.done}/{self.total}] {_record_text(record)}  elapsed {elapsed:.0f}s, about {left:.0f}s left",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        sys.stdout.flush()

    def close(self) -> None:
        pass


class QuietProgress:
    """Nothing while the run goes (``kbench run --no-progress``): only its score at the end."""

    def __init__(self, console: Console, show_turns: bool = False):
        pass

    def started(self, total: int, done: list[EvaluationRecord]) -> None:
        pass

    def finished(self, record: EvaluationRecord) -> None:
        pass

    def close(self) -> None:
        pass


class TooManyFailures(Exception):
    """A run stopped by ``--fail-on-error N``: its Nth failure outside the candidate."""

    def __init__(self, failures: list[EvaluationRecord]):
        self.failures = failures
        statuses = counts_text(_counts(failures))
        last = failures[-1]
        super().__init__(f"{len(failures)} failures outside the candidates ({statuses}); the last, "
                         f"{last.problem_id} #{last.sample_index}: {verdicts.one_line(last.reason)}")


class ErrorLimit:
    """A listener passing everything on to ``listener`` that stops the run (TooManyFailures,
    raised where the run tells it of a verdict, after it is stored) at the ``limit``-th failure
    that is not the candidate's: a request, the judge, the machine or the problem failed, and
    a pipeline would rather stop than fill a run with them."""

    def __init__(self, listener: Any, limit: int):
        self.listener, self.limit, self.failures = listener, limit, []

    def finished(self, record: EvaluationRecord) -> None:
        self.listener.finished(record)
        if record.status in RETRIED_STATUSES:
            self.failures.append(record)
            if len(self.failures) >= self.limit:
                raise TooManyFailures(self.failures)

    def __getattr__(self, name: str) -> Any:  # started, close, evaluating, turn_finished
        return getattr(self.listener, name)
