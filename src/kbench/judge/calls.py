"""The judge's half of a worker's calls: it hands out each call's seed, keeps
its own clock, counts the calls, and secretly picks which ones to check.

A worker makes every call the same way (``worker.Session.calls``); what a call
is for lives only here, in the judge's process. For each call the judge sends
a seed (the inputs exist nowhere before that), stamps its own monotonic clock,
and stamps it again when the worker reports the call done, with its clock's
reading and the fingerprint of its output and inputs. Only then does the
judge say whether it wants that call saved: a candidate cannot know, while it
computes, whether the call is a trial, a timed call, or both (every timed call
may be checked). A saved call is checked right away (``on_saved``), before the
worker gets its next order, so it holds only one output for the reference at
a time; the check's time is not the worker's and does not count against the
series' budget. The protocol's counting (warm-up, when to stop) is the
judge's ``StopRule``, fed with the times the worker reports: a worker that
lies about them changes only when the judge stops, never what it believes
about the time, which ``trusted_clock_findings`` bounds by the judge's clock.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kbench.judge.guard import Finding
from kbench.judge.process import WorkerLost
from kbench.judge.timing import StopRule, Timing, TimingSettings, clock_name

# Each span of the judge's clock beyond the worker's (trusted_clock_findings)
# is the same work for the candidate as for eager on the same inputs. The
# candidate's (median ms per call) may pass eager's by this ratio, plus a slack,
# plus a fraction of its own reported time (on a CPU, the Triton interpreter's
# garbage is collected between calls). The slack is what honest solutions
# differ by on the H200 and the 2-core CPU machine: docs/guard.md.
TRUSTED_RATIO = {"cuda": 1.1, "cpu": 1.5}
TRUSTED_SLACK_MS = {"cuda": 0.3, "cpu": 2.0}
TRUSTED_FRACTION = {"cuda": 0.05, "cpu": 0.5}
CHECKS_PER_ROUND = 2.0  # expected timed calls checked per round (and at least one)
# Calls after a checked one that settle rather than count. While the reference checks a call, the
# candidate waits; its next calls then ran slow on the H200 (the first 15%, the next five 4% down to
# 1%: the launch after a pause is cold, and letting go of the handed-over device buffer is an unmap),
# where eager's replay had no pause: most of the null candidate's handicap (docs/timing.md, "Where
# the null handicap lived"). Eager's replay settles on the same calls (``CallDriver.kinds``), so
# both sides' timed calls stay the same inputs, and neither side's pause is in the score. The
# slowness lasted a time rather than a count (30-40 ms of the judge's clock for 1 ms kernels, one
# 20 ms call for a 16 ms one), so the first call after a check always settles, and the next ones,
# up to SETTLE_CALLS, only while SETTLE_SECONDS have not passed since the check ended: a slow
# candidate (a correct kernel of a second a call) is not made to run six more calls per check,
# which nearly doubled its rounds against the evaluation's time limit.
SETTLE_CALLS = 6
SETTLE_SECONDS = 0.04


class ProtocolViolation(Exception):
    """The worker broke the calls protocol in a way only cheating explains."""

    def __init__(self, finding: Finding):
        super().__init__(finding.text())
        self.finding = finding


@dataclass
class Call:
    """One call as the judge saw it."""

    index: int
    seed: int
    kind: str  # "warmup", "timed" or "settle" (after a check: CallDriver._settles)
    recorded: bool = False  # the call whose operations the worker records (the judge's secret choice)
    judge_ms: float = 0.0  # the judge's clock: seed sent -> call reported returned
    digest_ms: float = 0.0  # the judge's clock: call reported returned -> its fingerprints reported
    clock_ms: float = 0.0  # what the worker's clock said (CUDA events, or its perf counter)
    host_ms: float = 0.0  # the worker's host clock around the synchronised call
    fingerprint: dict[str, str] | None = None  # of the output, and of the inputs after the call
    saved: Path | None = None  # the file the worker saved the call to, when the judge asked
    devices: dict[str, str] | None = None  # each output tensor's device, as the worker saved it
    layout: dict[str, Any] | None = None  # the output's layout in a device buffer, where it handed one over
    comparison: Any = None  # the reference's check of the saved call (a compare.Comparison)
    checked_at: float = 0.0  # the judge's clock when the check of the saved call ended


def timed_calls(calls: list[Call]) -> list[Call]:
    """The timed calls of a series (not its warm-up)."""
    return [c for c in calls if c.kind == "timed"]


def replayed_calls(calls: list[Call], settling: bool = True) -> list[Call]:
    """The calls of a candidate's round a baseline replays: every one, or, without ``settling``
    (``TimingSettings.replay_settling``, an experiment), all but those that settled after a check."""
    return [c for c in calls if settling or c.kind != "settle"]


class Checks:
    """Which calls of a series the judge asks to be saved: every one (trials) or,
    for timed rounds, a secret random few, about ``per_round`` of the timed calls
    (from the pace so far and what is left of the budget) and at least one; in timed
    rounds the ``settle`` calls after each check are neither timed nor checked
    (what one returns counts for nothing, and its inputs are no timed call's): the first after a check,
    and the next within SETTLE_SECONDS of its end, ``settle`` calls at most."""

    def __init__(self, directory: Path, prefix: str, every: bool = False, per_round: float = CHECKS_PER_ROUND):
        self.directory, self.prefix = directory, prefix
        self.every, self.per_round = every, per_round
        self.settle = 0 if every else SETTLE_CALLS
        self._random = random.SystemRandom()

    def wanted(self, call: Call, rule: StopRule, calls: list[Call], last: bool) -> bool:
        if self.every:
            return True
        if call.kind == "settle":
            return False
        if call.kind == "warmup":
            return self._random.random() < 1.0 / max(1, rule.settings.warmup_calls)
        timed = timed_calls(calls)
        if last and not any(c.saved for c in timed[:-1]):
            return True
        pace_ms = statistics.fmean(c.judge_ms for c in timed)
        left = max(0.0, rule.budget_end - time.monotonic()) * 1000 / max(pace_ms, 1e-3)
        expected = min(rule.settings.max_calls, max(rule.settings.min_calls, len(timed) + left))
        return self._random.random() < self.per_round / expected

    def path(self, call: Call) -> Path:
        return self.directory / f"{self.prefix}-{call.index}.pt"


def record_index(calls: int) -> int | None:
    """Which of a trial series' ``calls`` is recorded: one picked in secret
    (``random.SystemRandom``), never the first when there is another. The first
    call of a series of trials is the first call of its model, where an honest
    forward does its one-time set-up: a weight derived from its parameters and
    kept (a transpose, a scale folded in), a graph captured, a kernel compiled.
    What the style rules read should be forward as it runs in every later call,
    the timed ones among them; set-up done once is no PyTorch computing in place
    of a kernel (an honest solution was flagged `torch-compute` in half its
    evaluations for it). A candidate gains nothing from knowing the first call is
    not recorded: whatever it shows there is shown in no timed call. None: no call."""
    if calls <= 0:
        return None
    return random.SystemRandom().randrange(1 if calls > 1 else 0, calls)


class CallDriver:
    """Drives one ``calls`` command of a worker (pass it to ``Worker.request``).

    ``seeds`` gives each call's seed (a ``SeedFeed``: fresh, or those another
    worker was timed on); ``rule`` says how many calls; ``checks`` which to save;
    ``on_call`` is told of each call as it is handed out, before the judge's clock
    for it starts (a progress display of the trials); ``on_saved`` checks each
    saved call and returns the comparison; ``on_finding`` hears of a call whose
    output the worker saw was not plain tensors before its clock stopped
    (``output-subclass``; unheard, as for the reference, it is let be).
    With ``record``, one call, picked in secret (``random.SystemRandom``) among
    the series' first ``min_calls`` (all of a trial series) but the first
    (``record_index``), is the one the worker is told to record the operations
    of (``record_at``): the recorded call is one of the judged calls, at a place
    only the judge knows. ``kinds``: each call's kind as another series had it
    (eager's replay of a candidate's round, its settling calls included) instead
    of the rule's; the rule still counts them.

    Every report is checked before it is used: one the protocol does not
    allow is ``WorkerLost("protocol")``, a reading no clock gives (NaN,
    infinite, negative) a ``forged-report`` violation.
    """

    def __init__(self, settings: TimingSettings, seeds: Callable[[], int], checks: Checks | None = None,
                 deadline: float | None = None, on_call: Callable[[Call], None] | None = None,
                 on_saved: Callable[[Call], Any] | None = None, *,
                 on_finding: Callable[[Finding], None] | None = None, record: bool = False,
                 kinds: list[str] | None = None):
        self.rule = StopRule(settings, deadline)
        self.kinds = None if kinds is None else list(kinds)
        self.deadline = deadline if deadline is not None else float("inf")
        self.seeds = seeds
        self.checks = checks
        self.calls: list[Call] = []
        self.finished = False
        self.final: dict[str, Any] = {}  # the worker's answer once the judge said stop
        self.open: Call | None = None  # handed out, not yet reported
        self._sent_at = 0.0
        self._called_at: float | None = None  # when the open call was reported returned
        self._upcoming: str | None = None  # the next call's kind, decided before a save is asked for
        self.on_call = on_call
        self.on_saved = on_saved
        self.on_finding = on_finding
        self.record_at = record_index(settings.min_calls) if record else None

    def __call__(self, report: dict[str, Any], received: float | None = None) -> dict[str, Any]:
        """The judge's order in answer to a worker's report, which arrived at ``received``
        (the judge's monotonic clock; default: now)."""
        received = time.monotonic() if received is None else received
        if self.finished:
            raise WorkerLost("forged", "the worker asked for more calls after the judge said stop")
        if "called" in report:
            self._called(report["called"], received)
            return {"digest": True}
        if "done" in report:
            call = self._reported(report["done"], received)
            self._upcoming = self._next_kind()
            if self.checks is not None and self.checks.wanted(call, self.rule, self.calls, self._upcoming is None):
                call.saved = self.checks.path(call)
                return {"save": str(call.saved)}
        elif "saved" in report:
            self._saved(report["saved"])
        elif self.open is not None:
            raise ProtocolViolation(Finding(
                "input-feed", f"the worker asked for another call's inputs before reporting call {self.open.index}"))
        elif self.calls:
            raise WorkerLost("protocol", "the worker asked for an order twice")
        else:
            self._upcoming = self._next_kind()
        return self._hand_out(received)

    def _next_kind(self) -> str | None:
        if self.kinds is not None:
            return self.kinds.pop(0) if self.kinds else None
        return self.rule.next_call()

    def _called(self, called: Any, received: float) -> None:
        call = self.open
        if call is None or self._called_at is not None:
            raise WorkerLost("forged", "the worker reported a call the judge did not hand out")
        if not isinstance(called, dict):
            raise WorkerLost("protocol", "malformed call report")
        call.clock_ms = reading(called.get("clock_ms"), f"call {call.index}'s clock")
        call.host_ms = reading(called.get("host_ms"), f"call {call.index}'s host clock")
        odd = called.get("output")
        if odd is not None:
            if not isinstance(odd, str):
                raise WorkerLost("protocol", "malformed call report")
            if self.on_finding is not None:
                self.on_finding(Finding("output-subclass", f"call {call.index}: {odd[:300]} (seen before its clock "
                                        "stopped)"))
        self._called_at = received

    def _reported(self, done: Any, received: float) -> Call:
        call = self.open
        if call is None or self._called_at is None:
            raise WorkerLost("forged", "the worker reported fingerprints of a call it did not report")
        fingerprints = {key: done.get(key) for key in ("output", "inputs")} if isinstance(done, dict) else {}
        if not (fingerprints and all(isinstance(f, str) for f in fingerprints.values())):
            raise WorkerLost("protocol", "malformed call report")
        call.fingerprint = fingerprints
        call.judge_ms = (self._called_at - self._sent_at) * 1000
        call.digest_ms = (received - self._called_at) * 1000
        self.open, self._called_at = None, None
        self.calls.append(call)
        self.rule.record(call.kind, call.clock_ms, call.host_ms)
        return call

    def _saved(self, saved: Any) -> None:
        last = self.calls[-1] if self.calls else None
        if last is None or last.saved is None or last.devices is not None:
            raise WorkerLost("forged", "the worker reported a save the judge did not ask for")
        devices, layout = (saved.get("devices"), saved.get("layout")) if isinstance(saved, dict) else (None, None)
        if not isinstance(devices, dict) or not isinstance(layout, (dict, type(None))) \
                or not all(isinstance(v, str) for v in devices.values()):
            raise WorkerLost("protocol", "malformed save report")
        last.devices = dict(devices)
        last.layout = layout
        if self.on_saved is not None:
            started = time.monotonic()
            last.comparison = self.on_saved(last)
            self.rule.budget_end = min(self.rule.budget_end + time.monotonic() - started, self.deadline)
        last.checked_at = time.monotonic()

    def _hand_out(self, now: float) -> dict[str, Any]:
        """The next call's seed (the judge's clock starts now), or stop."""
        if self._upcoming is None:
            self.finished = True
            return {"stop": True}
        index, kind = len(self.calls), self._upcoming
        if kind == "timed" and self._settles(now):
            kind = "settle"
        self.open = Call(index=index, seed=self.seeds(), kind=kind, recorded=index == self.record_at)
        order: dict[str, Any] = {"seed": self.open.seed}
        if self.open.recorded:
            order["record"] = True
        if self.on_call is not None:
            self.on_call(self.open)
        self._sent_at = time.monotonic()
        return order

    def _settles(self, now: float) -> bool:
        """Whether the next call, handed out at ``now``, settles: it comes within ``checks.settle``
        calls of a checked one, and is either the first after it or within SETTLE_SECONDS of the
        check's end."""
        checks = self.checks
        if checks is None or checks.settle <= 0:
            return False
        checked = next((c for c in reversed(self.calls[-checks.settle:]) if c.saved), None)
        return checked is not None and (checked is self.calls[-1] or now - checked.checked_at < SETTLE_SECONDS)

    def timed(self) -> list[Call]:
        return timed_calls(self.calls)

    def saved(self) -> list[Call]:
        return [c for c in self.calls if c.saved is not None]

    def timing(self, device: str, final: dict[str, Any]) -> Timing:
        """The distribution of the timed calls, built here from the reports, with the judge's own times."""
        overhead = final.get("overhead_ms")
        overhead = float(overhead) if is_reading(overhead) else None
        return self.rule.timing(clock_name(device), overhead, [c.judge_ms for c in self.timed()])


def is_reading(value: Any) -> bool:
    """A number a clock could read: finite and not negative."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        value = float(value)
    except OverflowError:  # an integer past any float
        return False
    return math.isfinite(value) and value >= 0


def reading(value: Any, what: str) -> float:
    """A clock reading from a worker: a number (else the protocol is broken), finite
    and not negative (else it was forged: no clock reads NaN, infinity or less than nothing)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise WorkerLost("protocol", f"malformed call report: {what} is not a number")
    if not is_reading(value):
        raise ProtocolViolation(Finding("forged-report", f"{what} read {value!r} ms, which no clock reads"))
    return float(value)


def trusted_clock_findings(candidate: list[list[Call]], eager: list[list[Call]],
                           device: str) -> tuple[dict[str, float], list[Finding]]:
    """What the candidate's clock said, held against the judge's, and findings;
    ``candidate`` and ``eager`` are the timed calls of each round, eager's on the
    same inputs right after the candidate's.

    Per call the judge sees two spans: seed sent -> call reported returned,
    which holds the worker's clock reading plus drawing the inputs, the L2
    flush and a message each way; and call returned -> fingerprints reported.
    Neither the excess of the first over the reported time nor the second
    depends on who computes: eager on the same inputs sets what each may be
    (median ms per call). Work done before the clock starts (a profile hook on
    the input draw), a forged or edited time, or work finished after the call
    claimed to return (deferred computation) shows as a larger span. A call
    cannot take longer on the worker's clock than the judge saw pass.

    The spans are compared round by round, each against eager's of the same
    round (the same load on the machine, moments apart), and a span is
    suspect only when it passes its bound in every round: a cheat does its
    trick in every call, a burst of load on the machine lands in some rounds.
    """
    findings = []
    calls = [c for round_calls in candidate for c in round_calls]
    impossible = [c for c in calls if c.clock_ms > c.judge_ms * 1.01 + 0.01]
    if impossible:
        c = impossible[0]
        findings.append(Finding("trusted-clock", f"{len(impossible)} call(s) reported more time than the judge "
                                f"saw pass (call {c.index}: {c.clock_ms:.4g} ms reported in {c.judge_ms:.4g} ms)"))
    pairs = [(cand, base) for cand, base in zip(candidate, eager) if cand and base]
    if not pairs:
        return {}, findings
    measured = {}
    for name, span in SPANS.items():
        measured[f"candidate_{name}"] = statistics.median(map(span, calls))
        measured[f"eager_{name}"] = statistics.median(span(c) for _, base in pairs for c in base)
        rounds = []  # per round: (candidate's median span, eager's, the bound)
        for cand, base in pairs:
            base_ms = statistics.median(map(span, base))
            limit = trusted_clock_limit(base_ms, statistics.median(c.clock_ms for c in cand), device)
            rounds.append((statistics.median(map(span, cand)), base_ms, limit))
        if all(cand_ms > limit for cand_ms, _, limit in rounds):
            cand_ms, base_ms, limit = min(rounds, key=lambda r: r[0] - r[2])  # the round closest to its bound
            where = ("before or around its timed window, beyond what its clock reported" if name == "excess_ms"
                     else "after the call returned, until its fingerprints came")
            findings.append(Finding(
                "trusted-clock",
                f"in every one of {len(rounds)} round(s) the judge's clock saw more per call {where} than eager's "
                f"on the same inputs allows; at the closest, {cand_ms:.4g} ms against {base_ms:.4g} ms for eager "
                f"(at most {limit:.4g} ms allowed): work done outside the timed window",
            ))
    return measured, findings


# The two spans of a call the judge holds against eager's (trusted_clock_findings).
SPANS: dict[str, Callable[[Call], float]] = {
    "excess_ms": lambda c: c.judge_ms - c.clock_ms,  # the call's span beyond its reported time
    "digest_ms": lambda c: c.digest_ms,  # the call reported returned -> its fingerprints reported
}


def trusted_clock_limit(eager_excess_ms: float, candidate_ms: float, device: str) -> float:
    """The most the judge's clock may see beyond the candidate's, per call (ms)."""
    kind = "cuda" if device.startswith("cuda") else "cpu"
    return TRUSTED_RATIO[kind] * eager_excess_ms + TRUSTED_SLACK_MS[kind] + TRUSTED_FRACTION[kind] * candidate_ms
