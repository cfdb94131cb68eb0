"""The judge's half of a worker's calls: it hands out each call's seed, keeps
its own clock, counts the calls, and secretly picks which ones to check.

A worker makes every call the same way (``worker.Session.calls``); what a call
is for lives only here, in the judge's process. For each call the trusted side
(the reference worker) draws the seed's inputs into shared memory, the worker
is told to go, reports the call done with its clock's reading, and the trusted
side copies the output out; the judge's clock runs from the draw asked for to
the output read. Only then does the judge say whether it checks that call: a
candidate cannot know, while it computes, whether the call is a trial, a timed
call, or both (every timed call may be checked). A checked call is checked
right away (``on_saved``: its output against the reference's, the shared inputs
against the seed's drawn again), before the worker gets its next order, so the
reference holds one output at a time; the check's time is not the worker's and
does not count against the series' budget. The protocol's counting (warm-up,
when to stop) is the judge's ``StopRule``, fed with the times the worker
reports: a worker that lies about them changes only when the judge stops,
never the time it is given, which ``trusted_times`` bounds call by call by the
judge's clock.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from kbench.judge.guard import Finding
from kbench.judge.processes.process import WorkerLost
from kbench.judge.protocol.timing import StopRule, Timing, TimingSettings, clock_name

# Each call's span of the judge's clock beyond the worker's reported time (trusted_times)
# is the same work for the candidate as for eager on the same inputs. The
# candidate's (each call's) may pass eager's (the round's median) by this ratio, plus a slack,
# plus a fraction of its own reported time (on a CPU, the Triton interpreter's
# garbage is collected between calls). The slack is what honest solutions
# differ by on the H200 and the 2-core CPU machine: docs/measurements/2026-12-01-trusted-clock-and-fingerprint.md.
TRUSTED_RATIO = {"cuda": 1.1, "cpu": 1.5}
TRUSTED_SLACK_MS = {"cuda": 0.3, "cpu": 2.0}
TRUSTED_FRACTION = {"cuda": 0.05, "cpu": 0.5}
CHECKS_PER_ROUND = 2.0  # expected timed calls checked per round (and at least one)
# Calls after a checked one that settle rather than count. While the reference checks a call, the
# candidate waits; its next calls then ran slow on the H200 (the first 15%, the next five 4% down to
# 1%: the launch after a pause is cold, and letting go of the handed-over device buffer is an unmap),
# where eager's replay had no pause: most of the null candidate's handicap
# (docs/measurements/2026-12-04-null-handicap.md). Eager's replay settles on the same calls (``CallDriver.kinds``), so
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
    judge_ms: float = 0.0  # the judge's clock: the inputs' draw asked for -> the output read by the trusted side
    # the same clock's steps within judge_ms: the draw asked for -> "go" sent; "go" sent -> "done" in; -> read
    steps_ms: tuple[float, float, float] = (0.0, 0.0, 0.0)
    clock_ms: float = 0.0  # what the worker's clock said (CUDA events, or its perf counter)
    host_ms: float = 0.0  # the worker's host clock around the synchronised call
    devices: dict[str, str] | None = None  # each output tensor's device, as the worker reported it
    layout: dict[str, Any] | None = None  # the output's layout in the worker's shared buffer
    checked: bool = False  # the judge picked it for the reference to check
    comparison: Any = None  # the reference's check of the call (a compare.Comparison)
    checked_at: float = 0.0  # the judge's clock when the check ended


def timed_calls(calls: list[Call]) -> list[Call]:
    """The timed calls of a series (not its warm-up)."""
    return [c for c in calls if c.kind == "timed"]


def replayed_calls(calls: list[Call], settling: bool = True) -> list[Call]:
    """The calls of a candidate's round a baseline replays: every one, or, without ``settling``
    (``TimingSettings.replay_settling``, an experiment), all but those that settled after a check."""
    return [c for c in calls if settling or c.kind != "settle"]


class Checks:
    """Which calls of a series the judge has checked: every one (trials) or, for timed rounds,
    a secret random few, about ``per_round`` of the timed calls (from the pace so far and what
    is left of the budget) and at least one; in timed rounds the ``settle`` calls after each
    check are neither timed nor checked (what one returns counts for nothing, and its inputs
    are no timed call's): the first after a check, and the next within SETTLE_SECONDS of its
    end, ``settle`` calls at most. The choice is made after the call's output was read."""

    def __init__(self, every: bool = False, per_round: float = CHECKS_PER_ROUND):
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
        if last and not any(c.checked for c in timed[:-1]):
            return True
        pace_ms = statistics.fmean(c.judge_ms for c in timed)
        left = max(0.0, rule.budget_end - time.monotonic()) * 1000 / max(pace_ms, 1e-3)
        expected = min(rule.settings.max_calls, max(rule.settings.min_calls, len(timed) + left))
        return self._random.random() < self.per_round / expected


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


class TrustedSide(Protocol):
    """Where a candidate's calls get their inputs and leave their outputs: the reference worker,
    which draws each call's inputs into memory it shares with the candidate's process and reads
    each output back into its own (kbench.judge.trusted.reference.ReferenceExchange)."""

    def draw(self, seed: int) -> dict[str, Any]:
        """The inputs of ``seed`` drawn and shared: the ``go`` order's fields for the candidate."""

    def read(self, done: dict[str, Any]) -> dict[str, Any]:
        """The output the candidate reported ``done`` copied into the reference; its answer."""


class CallDriver:
    """Drives one ``calls`` command of a worker (pass it to ``Worker.request``).

    Each call has three steps, in this order, and the judge's clock runs from the first to
    the last: the trusted side draws the call's inputs into shared memory (``draw``), the
    worker makes the call on them and packs its output into shared memory (``go``), the
    trusted side copies the output out (``read``). A candidate's draws and reads are made by
    ``trusted`` (the reference worker) while the candidate waits; a worker timing itself
    (``trusted`` None: eager, a compiled column) is ordered to draw and read its own calls, the
    very same steps, so that the judge's clock sees the same work around both.

    ``seeds`` gives each call's seed (a ``SeedFeed``: fresh, or those another
    worker was timed on); ``rule`` says how many calls; ``checks`` which to check, each
    checked by ``on_saved`` right after its read, before the next call (off the budget);
    ``on_call`` is told of each call as it is handed out, before the judge's clock
    for it starts (a progress display of the trials); ``on_finding`` hears of a call whose
    output the worker saw was not plain tensors before its clock stopped
    (``output-subclass``).
    With ``record``, one call, picked in secret (``random.SystemRandom``) among
    the series' first ``min_calls`` (all of a trial series) but the first
    (``record_index``), is the one the worker is told to record the operations
    of (``record_at``). ``kinds``: each call's kind as another series had it
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
                 kinds: list[str] | None = None, trusted: TrustedSide | None = None):
        self.rule = StopRule(settings, deadline)
        self.kinds = None if kinds is None else list(kinds)
        self.deadline = deadline if deadline is not None else float("inf")
        self.seeds = seeds
        self.checks = checks
        self.trusted = trusted
        self.calls: list[Call] = []
        self.finished = False
        self.final: dict[str, Any] = {}  # the worker's answer once the judge said stop
        self.open: Call | None = None  # handed out, not yet read
        self._step = ""  # the open call's step the worker is at: "draw", "go" or "read"
        self._sent_at = 0.0
        self._go_at = self._done_at = 0.0  # the open call's "go" order sent, its "done" report in
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
        steps = [key for key in ("ready", "done", "read") if key in report]
        if self.open is None:
            if steps or self.calls:
                raise WorkerLost("protocol" if not steps else "forged",
                                 "the worker asked for an order twice" if not steps else
                                 "the worker reported a call the judge did not hand out")
            return self._hand_out(self._next_kind())
        expected = {"draw": "ready", "go": "done", "read": "read"}[self._step]
        if steps != [expected]:
            if not steps:
                raise ProtocolViolation(Finding(
                    "input-feed", f"the worker asked for another call before call {self.open.index} was read"))
            raise WorkerLost("protocol", f"the worker reported {steps} where the judge waited for {expected!r}")
        if expected == "ready":
            return self._go(_fields(report["ready"], "draw"))
        if expected == "done":
            self._done_at = received
            done = self._done(report["done"])
            if self.trusted is None:
                self._step = "read"
                return {"read": {"layout": done["layout"]}}
            self.trusted.read(done)
            received = time.monotonic()
        else:
            _fields(report["read"], "read")  # nothing in it decides anything; a malformed one breaks the protocol
        return self._read(received)

    def _next_kind(self) -> str | None:
        if self.kinds is not None:
            return self.kinds.pop(0) if self.kinds else None
        return self.rule.next_call()

    def _hand_out(self, kind: str | None) -> dict[str, Any]:
        """The next call (of ``kind``), or stop; the judge's clock for it starts as its draw is asked for."""
        if kind is None:
            self.finished = True
            return {"stop": True}
        index = len(self.calls)
        if kind == "timed" and self._settles(time.monotonic()):
            kind = "settle"
        self.open = Call(index=index, seed=self.seeds(), kind=kind, recorded=index == self.record_at)
        if self.on_call is not None:
            self.on_call(self.open)
        self._sent_at = time.monotonic()
        if self.trusted is None:
            self._step = "draw"
            return {"draw": self.open.seed}
        return self._go(self.trusted.draw(self.open.seed))

    def _go(self, drawn: dict[str, Any]) -> dict[str, Any]:
        self._step = "go"
        self._go_at = time.monotonic()
        order: dict[str, Any] = {"go": {key: drawn.get(key) for key in ("layout", "fresh", "capacity")}}
        if self.open.recorded:
            order["go"]["record"] = True
        return order

    def _done(self, done: Any) -> dict[str, Any]:
        """The worker's report of the open call: its clock's readings, its output's layout."""
        call = self.open
        done = _fields(done, "call")
        call.clock_ms = reading(done.get("clock_ms"), f"call {call.index}'s clock")
        call.host_ms = reading(done.get("host_ms"), f"call {call.index}'s host clock")
        layout, devices = done.get("layout"), done.get("devices")
        if not isinstance(layout, dict) or not isinstance(devices, dict) \
                or not all(isinstance(v, str) for v in devices.values()):
            raise WorkerLost("protocol", "malformed call report")
        call.layout, call.devices = layout, dict(devices)
        odd = done.get("output")
        if odd is not None:
            if not isinstance(odd, str):
                raise WorkerLost("protocol", "malformed call report")
            if self.on_finding is not None:
                self.on_finding(Finding("output-subclass", f"call {call.index}: {odd[:300]} (seen before its clock "
                                        "stopped)"))
        return done

    def _read(self, received: float) -> dict[str, Any]:
        """The open call's output read by the trusted side: the judge's clock for it stops; the
        call is counted, checked if the judge picks it, and the next one handed out."""
        call = self.open
        call.judge_ms = (received - self._sent_at) * 1000
        call.steps_ms = ((self._go_at - self._sent_at) * 1000, (self._done_at - self._go_at) * 1000,
                         (received - self._done_at) * 1000)
        self.open, self._step = None, ""
        self.calls.append(call)
        self.rule.record(call.kind, call.clock_ms, call.host_ms)
        upcoming = self._next_kind()
        if self.checks is not None and self.checks.wanted(call, self.rule, self.calls, upcoming is None):
            call.checked = True
            if self.on_saved is not None:
                started = time.monotonic()
                call.comparison = self.on_saved(call)
                self.rule.budget_end = min(self.rule.budget_end + time.monotonic() - started, self.deadline)
            call.checked_at = time.monotonic()
        return self._hand_out(upcoming)

    def _settles(self, now: float) -> bool:
        """Whether the next call, handed out at ``now``, settles: it comes within ``checks.settle``
        calls of a checked one, and is either the first after it or within SETTLE_SECONDS of the
        check's end."""
        checks = self.checks
        if checks is None or checks.settle <= 0:
            return False
        checked = next((c for c in reversed(self.calls[-checks.settle:]) if c.checked), None)
        return checked is not None and (checked is self.calls[-1] or now - checked.checked_at < SETTLE_SECONDS)

    def timed(self) -> list[Call]:
        return timed_calls(self.calls)

    def saved(self) -> list[Call]:
        """The calls the reference checked."""
        return [c for c in self.calls if c.checked]

    def timing(self, device: str, final: dict[str, Any]) -> Timing:
        """The distribution of the timed calls, built here from the reports, with the judge's own times."""
        overhead = final.get("overhead_ms")
        overhead = float(overhead) if is_reading(overhead) else None
        return self.rule.timing(clock_name(device), overhead, [c.judge_ms for c in self.timed()])


def _fields(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WorkerLost("protocol", f"malformed {what} report")
    return value


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


def trusted_times(candidate: list[list[Call]], eager: list[list[Call]],
                  device: str) -> tuple[list[list[float]], dict[str, float], list[Finding]]:
    """Each of the candidate's timed calls' time as the judge accepts it, round by round, what
    the spans measured, and findings; ``candidate`` and ``eager`` are the timed calls of each
    round, eager's on the same inputs right after the candidate's, made the same way.

    For every call the judge's clock runs from asking the trusted side for its inputs to the
    trusted side's copy of its output: whatever the candidate's process did for that call, in
    forward or anywhere else, lies inside it. Beyond the time the worker's clock reported, the
    span holds the draw, the flush, the packing, the copies and the messages, which eager's
    calls of the same round hold too (their median excess). A call whose span passes the
    reported time by more than eager's excess allows (``trusted_clock_limit``) is timed by the
    judge's clock instead: its span less that allowance. An attacker gains at most the allowance
    (as before, when such a call's span less eager's excess was taken), and an honest call whose
    round of spans ran a little slower than eager's (on the H100 a round's median excess moved by
    up to 1 ms of 8-17 between the two sides) loses only what passed the allowance, not all of it
    (docs/measurements/2026-12-06-h100-null-lazy-truth.md). Call by call, so that work moved to a
    different place in each call cannot hide behind medians; no rejection, since a candidate
    gains nothing by it, and an honest call delayed by the machine only loses a little of its
    own time (a flag says how many calls, with the first one's readings, where that moved the
    median: FLAGGED_SHIFT, FLAGGED_SHARE)."""
    findings = []
    accepted: list[list[float]] = []
    replaced: list[tuple[int, Call, float]] = []
    for index, cand in enumerate(candidate):
        base = eager[index] if index < len(eager) else []
        excess = statistics.median(c.judge_ms - c.clock_ms for c in base) if base else 0.0
        times = []
        for call in cand:
            allowed = trusted_clock_limit(excess, call.clock_ms, device)
            if call.judge_ms - call.clock_ms > allowed:
                times.append(call.judge_ms - allowed)
                replaced.append((index, call, excess))
            else:
                times.append(call.clock_ms)
        accepted.append([max(t, MIN_CALL_MS) for t in times])
    calls = [c for round_calls in candidate for c in round_calls]
    base_calls = [c for round_calls in eager for c in round_calls]
    measured: dict[str, float] = {"calls_timed_by_judge": float(len(replaced))}
    for name, series in (("candidate", calls), ("eager", base_calls)):
        if series:
            measured[f"{name}_excess_ms"] = statistics.median(c.judge_ms - c.clock_ms for c in series)
            for step, label in enumerate(("draw", "go", "read")):  # where the excess goes
                measured[f"{name}_{label}_ms"] = statistics.median(c.steps_ms[step] for c in series)
    reported = statistics.median(c.clock_ms for c in calls) if calls else 0.0
    moved = statistics.median(t for times in accepted for t in times) > reported * (1 + FLAGGED_SHIFT) if calls else False
    if len(replaced) > len(calls) * FLAGGED_SHARE["cuda" if device.startswith("cuda") else "cpu"] and moved:
        index, call, excess = replaced[0]
        findings.append(Finding(
            "trusted-clock",
            f"{len(replaced)} of {len(calls)} timed calls took longer on the judge's clock than their reported time "
            f"and eager's excess allow, and were timed by the judge's clock instead (first: call {call.index} of "
            f"round {index}, {call.clock_ms:.4g} ms reported, {call.judge_ms:.4g} ms seen, eager's excess "
            f"{excess:.4g} ms)"))
    impossible = [c for c in calls if c.clock_ms > c.judge_ms * 1.01 + 0.01]
    if impossible:
        c = impossible[0]
        findings.append(Finding("trusted-clock", f"{len(impossible)} call(s) reported more time than the judge "
                                f"saw pass (call {c.index}: {c.clock_ms:.4g} ms reported in {c.judge_ms:.4g} ms)"))
    return accepted, measured, findings


def accepted_medians(candidate: list[Any], eager: list[Any], device: str) -> list[float]:
    """Each round's median of the times the judge accepts (``trusted_times``), from each round's
    series of the candidate and of eager (whose ``timed()`` are its timed calls): the rounds the
    verdict reports, so the ones its stopping rule reads while the rounds go on."""
    accepted = trusted_times([s.timed() for s in candidate], [s.timed() for s in eager], device)[0]
    return [statistics.median(times) for times in accepted]


MIN_CALL_MS = 1e-6  # a call's time is never taken as zero (a speedup divides by it)
# The flag says that calls were timed by the judge's clock only where that moved the candidate's median
# time by more than this: a few calls of an honest solution delayed by a busy machine change nothing.
FLAGGED_SHIFT = 0.01
# ... and only where more than this share of the calls was: on a busy 2-core CPU an honest solution's
# spans jitter by tens of ms, and up to 7 of 15 calls of one were timed by the judge's clock (2026-12-05).
FLAGGED_SHARE = {"cuda": 0.25, "cpu": 0.6}


def trusted_clock_limit(eager_excess_ms: float, candidate_ms: float, device: str) -> float:
    """The most the judge's clock may see beyond the candidate's reported time, per call (ms)."""
    kind = "cuda" if device.startswith("cuda") else "cpu"
    return TRUSTED_RATIO[kind] * eager_excess_ms + TRUSTED_SLACK_MS[kind] + TRUSTED_FRACTION[kind] * candidate_ms
