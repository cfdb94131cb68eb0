"""Each timed call of a null candidate and of eager beside it, kept for the report (null_candidates.py --per-call).

A null candidate scores a little below 1 on the H200, by about 0.3% on some problems in every run
(conv2d_depthwise, group_norm) and not on others (docs/measurements/2026-12-03-worker-pairs.md, "The stopping rule one
at a time").
A round's speedup is a ratio of medians, which cannot say which calls carry that handicap. Eager
replays the candidate's seeds in the candidate's order, so call i of one side is call i of the
other, on the same inputs: ln(eager_i / candidate_i) call by call, grouped by what came just before
the call, tells where the handicap lives. The one thing only the candidate's round has is the
judge's checks: after a call the judge picked, the reference checks it before the candidate gets
its next order (kbench.judge.trusted.calls). So each call is kept with how many calls after the round's last
checked one it came (``since_check``; ``after_check``: right after), beside its position in the round.
On the H200 that found it: the six calls after a check ran slow (docs/measurements/2026-12-04-null-handicap.md, "Where
the null
handicap lived"), which settle now (``kbench.judge.trusted.calls.SETTLE_CALLS``); the distances past them
say whether any slowness is left.

``CallCapture`` wraps ``ReferenceSide.replay_round`` in this process (the judge runs in it): it
reads what the round already holds and changes nothing judged. What it kept for a problem is handed
to that problem's next verdict in order, and only where the rounds it kept are the verdict's (their
medians match): a confirmation's extra evaluation, say, leaves the row without it rather than wrong.
"""

from __future__ import annotations

import math
import statistics
import threading
from collections import defaultdict, deque
from typing import Any

from kbench.judge.trusted.reference import ReferenceSide

SINCE_SHOWN = 12  # calls since a check, each shown alone up to this many


class CallCapture:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pairs: dict[str, deque[list[dict[str, Any]]]] = defaultdict(deque)  # per problem, each pair's rounds
        self._original = ReferenceSide.replay_round

    def __enter__(self) -> "CallCapture":
        capture, original = self, self._original

        def replay_round(side, workers, timed, rounds, series=None, round_index=None, **options):
            original(side, workers, timed, rounds, series, round_index, **options)
            if series is not None and series.get("eager"):
                capture._keep(side, timed, series["eager"][-1])

        ReferenceSide.replay_round = replay_round
        return self

    def __exit__(self, *exc: object) -> None:
        ReferenceSide.replay_round = self._original

    def _keep(self, side: ReferenceSide, timed: Any, eager: Any) -> None:
        since_check: list[int | None] = []  # each timed call's distance in calls from the last checked one
        last_saved: int | None = None
        for position, call in enumerate(timed.calls):
            if call.kind == "timed":
                since_check.append(None if last_saved is None else position - last_saved)
            if call.checked:
                last_saved = position
        kept = {"candidate_ms": [c.clock_ms for c in timed.timed()], "eager_ms": [c.clock_ms for c in eager.timed()],
                "after_check": [since == 1 for since in since_check], "since_check": since_check,
                # every call of the round as the judge saw it: where its span went (CallDriver's steps)
                "calls": [_seen(c) for c in timed.calls], "eager_calls": [_seen(c) for c in eager.calls]}
        with self._lock:
            if not hasattr(side, "_call_capture"):  # a new evaluation (worker pair) of this problem: its rounds
                side._call_capture = []
                self._pairs[side.problem.id].append(side._call_capture)
            side._call_capture.append(kept)

    def take(self, problem_id: str, eager_rounds_ms: list[float] | None, pair_count: int) -> list | None:
        """The rounds kept for the verdict of ``problem_id`` whose eager round medians are ``eager_rounds_ms``
        over ``pair_count`` pairs: a list per pair of its rounds; None where what was kept is not those rounds.
        Matched on eager's medians: the candidate's in the verdict are of the times the judge accepted,
        which the judge's clock replaces call by call (trusted_times), eager's are as reported."""
        with self._lock:
            pairs = self._pairs[problem_id]
            taken = [pairs.popleft() for _ in range(min(pair_count, len(pairs)))]
        medians = [statistics.median(r["eager_ms"]) for rounds in taken for r in rounds if r["eager_ms"]]
        if not eager_rounds_ms or len(medians) != len(eager_rounds_ms) or any(
                not math.isclose(a, b, rel_tol=1e-6) for a, b in zip(medians, eager_rounds_ms)):
            return None
        return taken


def _seen(call: Any) -> dict[str, Any]:
    return {"kind": call.kind, "checked": call.checked, "clock_ms": round(call.clock_ms, 4),
            "judge_ms": round(call.judge_ms, 3), "steps_ms": [round(s, 3) for s in call.steps_ms]}


def per_call_report(rows: list[dict]) -> None:
    """Mean ln(eager_i / candidate_i) over the calls of every row that kept them, right after a
    checked call against the others, the first call of a round against the rest, and the share
    of the handicap the calls after a check carry (a round's score with and without them); over
    all rows, then by problem."""
    kept_rows = [r for r in rows if r.get("per_call")]
    if not kept_rows:
        return
    summary = _call_summary(kept_rows)
    print(f"  call by call ({summary['rounds']} rounds), mean ln(eager_i / candidate_i) on the same inputs: "
          + "; ".join(_mean_line(name, values) for name, values in summary["groups"].items()))
    print(f"    a round's ln(eager median / candidate median), mean over rounds: {summary['with']:+.3%} with every "
          f"call, {summary['without']:+.3%} without those right after a checked call")
    if summary["since"]:
        print("    by calls since the round's last check (settling calls are in neither side's times): " + "; ".join(
            f"{since}: {statistics.fmean(v):+.2%} ({len(v)})" for since, v in sorted(summary["since"].items())))
    for problem in sorted({r["problem"] for r in kept_rows}):
        by_problem = _call_summary([r for r in kept_rows if r["problem"] == problem])
        groups = by_problem["groups"]
        print(f"    {problem}: " + "; ".join(_mean_line(name, groups[name]) for name in (
            "after a checked call", "after an unchecked call") if name in groups)
              + f"; a round's score {by_problem['with']:+.3%}, {by_problem['without']:+.3%} without them")


def _call_summary(rows: list[dict]) -> dict:
    groups: dict[str, list[float]] = defaultdict(list)
    since_groups: dict[int, list[float]] = defaultdict(list)  # up to SINCE_SHOWN; further ones as SINCE_SHOWN
    with_all, without_checked = [], []
    for r in rows:
        for rounds in r["per_call"]:
            for kept in rounds:
                pairs = list(zip(kept["candidate_ms"], kept["eager_ms"], kept["after_check"]))
                rest = [p for p in pairs if not p[2]]
                if not rest or len(kept["candidate_ms"]) != len(kept["eager_ms"]):
                    continue
                for position, (c, e, after) in enumerate(pairs):
                    ratio = math.log(e / c)
                    groups["after a checked call" if after else "after an unchecked call"].append(ratio)
                    groups["first call of a round" if position == 0 else "later calls"].append(ratio)
                    since = (kept.get("since_check") or [None] * len(pairs))[position]
                    if since is not None:
                        since_groups[min(since, SINCE_SHOWN)].append(ratio)
                with_all.append(_median_ratio(pairs))
                without_checked.append(_median_ratio(rest))
    return {"groups": groups, "since": since_groups, "rounds": len(with_all),
            "with": statistics.fmean(with_all or [math.nan]),
            "without": statistics.fmean(without_checked or [math.nan])}


def _mean_line(name: str, values: list[float]) -> str:
    spread = f" ± {statistics.stdev(values) / math.sqrt(len(values)):.2%}" if len(values) >= 2 else ""
    return f"{name} {statistics.fmean(values):+.2%}{spread} ({len(values)} calls)"


def _median_ratio(pairs: list[tuple[float, float, bool]]) -> float:
    return math.log(statistics.median(e for _, e, _ in pairs) / statistics.median(c for c, _, _ in pairs))
