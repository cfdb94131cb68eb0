"""Worker pairs: the part of a speedup's error that stays with one pair of processes, sampled.

An evaluation times the candidate and its baselines interleaved, round after
round, in one reference worker and one candidate worker. What those two
processes bring (where their buffers land, which kernels their libraries pick,
the moment they run in) moves every round of the evaluation alike: on the H200
a null candidate's score erred by about 0.6% rms whatever the count of rounds,
and averaging whole evaluations brought that down about as 1/sqrt(n)
(docs/measurements/2026-12-03-out-of-sample-clocks.md). So a verdict asked to repeat more closely
than one pair can is the average of several evaluations, each in a fresh pair of
workers (``TimingSettings.pairs`` at least, up to ``max_pairs`` until the
interval is within ``target_pair_error``, or, with ``decide_at``, clear of the
speedups a score turns on): their log speedups averaged, the
candidate's and each measured baseline's times as geometric means (so a speedup
is still its baseline's time over the candidate's), and an interval whose
between-process part shrinks as 1/sqrt(n), widened again when the pairs
disagree by more than that spread allows (a candidate whose kernels differ by
process, as an autotuner's choice can).

Every pair is a whole evaluation: fresh seeds, its trials, its checked timed
calls, its guard, its confirmation of a suspicion; only the trial at the
problem's other size (a kernel for the test shape only fails it) is the first
pair's alone, a property of the solution that the later pairs, there to sample
the timing, would pay for again (1.9 s of a level-1 evaluation's 4.9 s on the
H200). A pair that is not ``correct`` is the verdict, whatever came before it: a
candidate that passes in one pair of processes and fails in the next has failed.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import Any, Callable

from kbench.core.verdict import Verdict
from kbench.judge.protocol.repeatability import Z95, between_process_sd, exp, usable
from kbench.judge.protocol.timing import TimingSettings

# A pair's timing summary: these are combined as geometric means over the pairs (medians, means and
# quartiles of per-call times), the extremes as extremes, the counts summed.
GEOMETRIC_FIELDS = ("median_ms", "mean_ms", "p25_ms", "p75_ms", "host_median_ms", "judge_median_ms", "overhead_ms")


def most_pairs(settings: TimingSettings) -> int:
    return max(1, settings.pairs, settings.max_pairs)


def sampled(judge_pair: Callable[[bool], Verdict], settings: TimingSettings, repository: bool = False,
            progress: Callable[[str], None] | None = None) -> Verdict:
    """The verdict of one evaluation (``judge_pair``, each call in fresh workers, told whether it is
    the first), or of as many as ``settings`` ask for, combined (``combined``); the first pair
    that is not correct ends it."""
    verdicts = [judge_pair(True)]
    while verdicts[-1].status == "correct" and more_pairs(verdicts, settings, repository):
        if progress is not None:
            progress(f"worker pair {len(verdicts) + 1} of at most {most_pairs(settings)}: "
                     f"judged again in fresh processes")
        verdicts.append(judge_pair(False))
    *earlier, last = verdicts
    if not earlier:
        return last
    if last.status != "correct":
        return replace(last, reason=f"{last.reason} (in worker pair {len(verdicts)}; the {len(earlier)} "
                                    f"before were correct)",
                       suspicions=[s for v in verdicts for s in v.suspicions],
                       wall_seconds=sum(v.wall_seconds for v in verdicts))
    return combined(verdicts, repository)


def pairs_taken(timing: dict[str, Any] | None) -> int:
    """How many worker pairs a verdict's ``timing`` averages (``combined``'s ``pair_speedups``; 1 without)."""
    return max(map(len, ((timing or {}).get("pair_speedups") or {}).values()), default=1)


def more_pairs(verdicts: list[Verdict], settings: TimingSettings, repository: bool = False) -> bool:
    """Whether another pair is due: fewer than ``settings.pairs`` so far, or, below ``max_pairs``,
    a speedup whose 95% interval (over the pairs so far) reaches further than ``target_pair_error``
    from it, in log, on either side, and, with ``decide_at``, still holds one of those speedups.
    A verdict that timed nothing needs no more."""
    count = len(verdicts)
    if count >= most_pairs(settings) or not _columns(verdicts):
        return False
    if count < settings.pairs:
        return True
    return any(max(_half_widths(speedup, interval)) > settings.target_pair_error
               and undecided(interval, settings.decide_at)
               for speedup, interval, _ in _column_speedups(verdicts, repository).values())


def undecided(interval: list[float], decide_at: tuple[float, ...]) -> bool:
    """Whether an interval still holds a speedup a score turns on (any interval, with none given)."""
    return not decide_at or any(interval[0] <= at <= interval[1] for at in decide_at)


def combined(verdicts: list[Verdict], repository: bool = False) -> Verdict:
    """One verdict from the correct verdicts of several pairs of the same solution: each column's
    speedup the geometric mean of the pairs', the times geometric means, the trials, seeds, flags
    and phases of all; the pairs' own speedups and within intervals kept in ``timing``
    (``pair_speedups``, ``pair_intervals_within``), from which any fewer pairs can be scored."""
    first = verdicts[0]
    columns = _column_speedups(verdicts, repository)
    speedup = {column: each[0] for column, each in columns.items()}
    timing = {**_combined_timing([v.timing for v in verdicts]),
              "pair_speedups": {column: [v.speedup[column] for v in verdicts] for column in speedup},
              "pair_intervals_within": {column: [v.speedup_interval_within.get(column) for v in verdicts]
                                        for column in speedup}}
    errors = [v for v in verdicts if v.max_abs_error is not None]
    relative = [v.max_rel_error for v in verdicts if v.max_rel_error is not None]
    return replace(
        first,
        reason=f"in each of {len(verdicts)} worker pairs: " + " | ".join(v.reason for v in verdicts),
        runtime_ms=timing["median_ms"],
        baselines={column: _combined_baseline([v.baselines.get(column) or {} for v in verdicts])
                   for column in first.baselines},
        speedup={**dict.fromkeys(first.speedup), **speedup},  # a column some pair has no speedup for: none
        speedup_interval={column: each[1] for column, each in columns.items()},
        speedup_interval_within={column: each[2] for column, each in columns.items()},
        timing=timing,
        trials=[trial for v in verdicts for trial in v.trials],
        max_abs_error=max((v.max_abs_error for v in errors), default=None),
        max_rel_error=max(relative, default=None),
        seeds={**first.seeds, "later_pairs": [v.seeds for v in verdicts[1:]]},
        phase_seconds={phase: sum(v.phase_seconds.get(phase, 0.0) for v in verdicts)
                       for phase in dict.fromkeys(p for v in verdicts for p in v.phase_seconds)},
        wall_seconds=sum(v.wall_seconds for v in verdicts),
        flags=list(dict.fromkeys(flag for v in verdicts for flag in v.flags)),
        suspicions=[s for v in verdicts for s in v.suspicions],
        handover=sorted({h for v in verdicts for h in v.handover}),
    )


def combined_speedup(speedups: list[float], withins: list[list[float] | None],
                     between_sd: float) -> tuple[float, list[float], list[float]]:
    """One column over the pairs: the speedup (the geometric mean of the pairs'), its 95% interval
    and its within-evaluation interval, from each pair's speedup and within interval (None: none).
    The within parts add as independent errors of a mean; the between-process one (``between_sd``,
    a log standard deviation) falls as 1/sqrt(n); both are widened by the pairs' disagreement."""
    count = len(speedups)
    logs = [math.log(value) for value in speedups]
    below, above = zip(*(_half_widths(value, within) for value, within in zip(speedups, withins)))
    centre = statistics.fmean(logs)
    within_below, within_above = (math.sqrt(sum(h * h for h in side)) / count for side in (below, above))
    between = Z95 * between_sd / math.sqrt(count)
    factor = _disagreement(logs, below, above, between_sd)
    return (exp(centre),
            [exp(centre - factor * math.hypot(within_below, between)),
             exp(centre + factor * math.hypot(within_above, between))],
            [exp(centre - within_below), exp(centre + within_above)])


def _column_speedups(verdicts: list[Verdict], repository: bool) -> dict[str, tuple[float, list[float], list[float]]]:
    """``combined_speedup`` of every column the pairs all measured (one pair: its own interval again)."""
    between_sd = between_process_sd(verdicts[0].device, repository)
    return {column: combined_speedup([v.speedup[column] for v in verdicts],
                                     [v.speedup_interval_within.get(column) for v in verdicts], between_sd)
            for column in _columns(verdicts)}


def _columns(verdicts: list[Verdict]) -> list[str]:
    """The columns every pair measured a speedup for (a usable one: finite and above 0)."""
    return [column for column in verdicts[0].speedup if all(usable(v.speedup.get(column)) for v in verdicts)]


def _half_widths(speedup: float, within: list[float] | None) -> tuple[float, float]:
    """How far, in log, a pair's own within-evaluation interval reaches below and above its speedup."""
    low, high = within or (speedup, speedup)
    return (math.log(speedup / low) if usable(low) and low <= speedup else math.inf,
            math.log(high / speedup) if usable(high) and high >= speedup else math.inf)


def _disagreement(logs: list[float], below: list[float], above: list[float], between_sd: float) -> float:
    """How much further apart than the spreads allow the pairs' log speedups lie: the square root of
    their chi-square over its degrees of freedom (the Birge ratio), each pair's variance its own
    within spread and the between-process one; 1 when they agree as well as those say or better."""
    variances = [((lo + hi) / 2 / Z95) ** 2 + between_sd ** 2 for lo, hi in zip(below, above)]
    if len(logs) < 2 or not all(math.isfinite(v) and v > 0 for v in variances):
        return 1.0
    centre = statistics.fmean(logs)
    chi_square = sum((value - centre) ** 2 / variance for value, variance in zip(logs, variances))
    return math.sqrt(max(1.0, chi_square / (len(logs) - 1)))


def _combined_baseline(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """A column's baseline record over the pairs: a measured column's time the geometric mean of
    the pairs' (what its speedup is the ratio of); a cached one's, the same in every pair, as it is."""
    first = entries[0]
    if not all(e.get("source") == "measured" and usable(e.get("runtime_ms")) for e in entries):
        return first
    timing = _combined_timing([e.get("timing") for e in entries])
    return {**first, "runtime_ms": statistics.geometric_mean([e["runtime_ms"] for e in entries]), "timing": timing}


def _combined_timing(timings: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The pairs' timing summaries as one: medians, means and quartiles as geometric means, the
    extremes as extremes, counts summed, every pair's rounds, and each pair's own median."""
    if not all(timings):
        return timings[0]
    combined_timing: dict[str, Any] = dict(timings[0])
    for key in GEOMETRIC_FIELDS:
        values = [t.get(key) for t in timings]
        combined_timing[key] = statistics.geometric_mean(values) if all(map(usable, values)) else None
    errors = [t.get("rel_error") for t in timings]
    combined_timing.update(
        min_ms=min(t["min_ms"] for t in timings),
        max_ms=max(t["max_ms"] for t in timings),
        stdev_ms=math.sqrt(statistics.fmean(t["stdev_ms"] * t["stdev_ms"] for t in timings)),
        count=sum(t["count"] for t in timings),
        rel_error=(math.sqrt(sum(e * e for e in errors)) / len(errors)
                   if all(isinstance(e, (int, float)) for e in errors) else None),
        rounds=[r for t in timings for r in t.get("rounds", [])],
        pair_medians_ms=[t["median_ms"] for t in timings],
    )
    return combined_timing
