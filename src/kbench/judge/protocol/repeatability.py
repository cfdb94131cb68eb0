"""What moves between evaluations: the speedup interval a reader can hold to.

One evaluation's bootstrap (``speedup_interval``) describes the noise
of the calls within its pair of processes. A new evaluation starts new
processes, whose buffers land elsewhere, whose libraries pick their kernels
anew, on a GPU whose clocks have moved: its speedup moves by more than that
interval says (on the H200, one evaluation's 95% interval held the other
evaluation's speedup 40% of the time). The verdict's ``speedup_interval`` adds
that between-process spread, a standard deviation of the log speedup
calibrated per device type from pairs of independent evaluations
(docs/timing.md, "Speedup intervals"), to each side of
the within-evaluation interval, which the verdict keeps as
``speedup_interval_within``.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kbench.judge.protocol.timing import TimingSettings

Z95 = 1.959964
# Standard deviation of one evaluation's log speedup from process to process, by device type,
# for a kernel problem. cuda: 1.1% from 166 null-candidate evaluations on the H200, 2026-12-01,
# when an evaluation's within interval was its calls' bootstrap alone (E[L^2] = s^2 + E[w^2], L
# the log speedup, w the within standard deviation). Since the within interval holds the rounds'
# own t interval and the candidate runs with the reference's runtime settings, far less is left
# between processes, but how much depends on the machine: over 254 null evaluations in six batches
# from four leases of an H200 (2026-12-02 and 03, three to eight rounds), 0.2% held 1.0 in 90%
# (one lease's batch: 75%), 0.3% in 94%, 0.4% in 96.5% (that batch: 88%), the smallest spread
# that keeps a 95% interval's promise over them all (docs/measurements/2026-12-03-six-rounds.md).
# cpu: not calibrated (CPU timings are noisy and say nothing about GPU kernels): a wide 5%.
BETWEEN_PROCESS_SD = {"cuda": 0.004, "cpu": 0.05}
# A repository task's columns (the base, its expert) come from workers whose times have differed
# by several percent for the same expert code (docs/measurements/2026-12-02-repo-replays.md): its spread stays at the
# 1.1% of
# 2026-12-01 until benchmarks/worker_spread.py calibrates it on its own.
REPOSITORY_BETWEEN_PROCESS_SD = {"cuda": 0.011, "cpu": 0.05}


def usable(value: object) -> bool:
    """A time or a ratio of times that a division or a logarithm may take: a finite number above 0.
    Zero, NaN and infinite readings (a clock that read nothing, a forged report) are none: every
    ratio of times here and in kbench.judge.protocol.pairs asks this first, so that such a reading gives no
    speedup (or the widest interval) instead of an exception (issue 57)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def ratio(numerator: object, denominator: object) -> float | None:
    """``numerator / denominator`` (a speedup: a baseline's time over the candidate's) where both
    are usable readings and the quotient is too; None otherwise."""
    if not (usable(numerator) and usable(denominator)):
        return None
    value = numerator / denominator  # type: ignore[operator]
    return value if usable(value) else None


def exp(value: float) -> float:
    """``math.exp`` that gives infinity past the largest float instead of an OverflowError (an
    interval's bound from readings that differ by hundreds of orders of magnitude)."""
    return math.exp(value) if value < 709.0 else math.inf


def between_process_sd(device: str, repository: bool = False) -> float:
    table = REPOSITORY_BETWEEN_PROCESS_SD if repository else BETWEEN_PROCESS_SD
    return table["cuda" if device.startswith("cuda") else "cpu"]


def widen(speedup: float, within: list[float], device: str, repository: bool = False) -> list[float]:
    """The 95% interval of a re-evaluation's truth: each side of the within-evaluation
    interval combined, in log space, with the between-process spread (a repository task's
    with ``repository``)."""
    spread = Z95 * between_process_sd(device, repository)
    if not usable(speedup):  # no speedup: an interval that says nothing
        return [0.0, math.inf]
    low, high = within
    below = math.hypot(math.log(speedup / low), spread) if usable(low) and low <= speedup else math.inf
    above = math.hypot(math.log(high / speedup), spread) if usable(high) and high >= speedup else math.inf
    return [speedup * exp(-below), speedup * exp(above)]


def speedup_interval(
    baseline_rounds: list[list[float]],
    candidate_rounds: list[list[float]],
    reps: int = 1000,
    seed: int = 0,
    over_rounds: bool = False,
) -> tuple[float, float]:
    """95% interval of median(baseline) / median(candidate) over the pooled calls.

    Bootstrap stratified by round: each replicate redraws every round's calls
    from that round, so the drift between rounds stays in the replicate as it
    was measured, and the interval reflects the noise within rounds; it is
    then widened to hold the rounds' own t interval (``rounds_interval``),
    which is wider when the rounds disagree by more than their calls' noise. With
    ``over_rounds`` (rounds that differ on purpose: a new placement each) a
    replicate first redraws the rounds themselves, each candidate round with
    the baseline round it alternated with, so the interval also holds what
    changes from round to round.
    """
    rng = np.random.default_rng(seed)
    # Readings no clock gives are left out of the rounds: a ratio of times never divides by one.
    baseline_rounds = [[v for v in r if usable(v)] for r in baseline_rounds]
    candidate_rounds = [[v for v in r if usable(v)] for r in candidate_rounds]
    kept = [i for i, (b, c) in enumerate(zip(baseline_rounds, candidate_rounds)) if b and c]
    baseline_rounds, candidate_rounds = [baseline_rounds[i] for i in kept], [candidate_rounds[i] for i in kept]
    count = len(kept)
    if count == 0:
        return 0.0, math.inf
    chosen = rng.integers(0, count, size=(reps, count)) if over_rounds else np.tile(np.arange(count), (reps, 1))

    def replicate_medians(rounds: list[list[float]]) -> np.ndarray:
        """Each replicate's median over its chosen rounds, each round's calls drawn
        again from it (rounds padded with NaN to one length, the padding never drawn)."""
        lengths = np.array([len(r) for r in rounds[:count]])
        padded = np.full((count, lengths.max()), np.nan)
        for index, calls in enumerate(rounds[:count]):
            padded[index, :len(calls)] = calls
        drawn = []
        for slot in range(count):
            length = lengths[chosen[:, slot]][:, None]
            positions = (rng.random((reps, padded.shape[1])) * length).astype(int)
            values = padded[chosen[:, slot][:, None], positions]
            values[np.arange(padded.shape[1]) >= length] = np.nan
            drawn.append(values)
        ordered = np.sort(np.concatenate(drawn, axis=1), axis=1)  # NaN sorts last
        valid = lengths[chosen].sum(axis=1)
        rows = np.arange(reps)
        return (ordered[rows, (valid - 1) // 2] + ordered[rows, valid // 2]) / 2

    ratios = np.sort(replicate_medians(baseline_rounds) / replicate_medians(candidate_rounds))
    low, high = float(ratios[int(0.025 * reps)]), float(ratios[int(0.975 * reps) - 1])
    rounds_low, rounds_high = rounds_interval(baseline_rounds[:count], candidate_rounds[:count])
    return min(low, rounds_low), max(high, rounds_high)


def rounds_interval(baseline_rounds: list[list[float]], candidate_rounds: list[list[float]]) -> tuple[float, float]:
    """The 95% t interval of the speedup over rounds, each round one reading (its baseline median over
    its candidate median; the two sides of a round are timed on the same inputs, one after the other).

    What moves from round to round (a GPU's clocks, a workload whose time drifts) is no noise of the
    calls, so the stratified bootstrap cannot see it; a speedup whose rounds disagree is known no better
    than they agree. ``speedup_interval`` is never narrower than this. (inf, -inf) with one round."""
    ratios = [ratio(statistics.median(b), statistics.median(c)) for b, c in zip(baseline_rounds, candidate_rounds)
              if b and c and all(map(usable, (*b, *c)))]
    logs = [math.log(r) for r in ratios if r is not None]
    if len(logs) < 2 or len(logs) < len(ratios):
        return math.inf, -math.inf
    centre, half_width = _t_interval(logs)
    return exp(centre - half_width), exp(centre + half_width)


def _t_interval(logs: list[float]) -> tuple[float, float]:
    """The mean of two readings or more and half its 95% t interval."""
    return statistics.fmean(logs), _t_half_width(statistics.stdev(logs), len(logs))


def _t_half_width(sd: float, count: int) -> float:
    """Half the 95% t interval of the mean of ``count`` readings whose standard deviation is ``sd``."""
    return T_975[min(count - 1, len(T_975)) - 1] * sd / math.sqrt(count)


# Two-sided 95% quantiles of Student's t by degrees of freedom (1-20); beyond, the last (a little wide).
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)


def rounds_settled(candidate_ms: list[float], baseline_ms: list[float], settings: TimingSettings) -> bool:
    """Whether the interleaved rounds so far are enough: ``settings.rounds`` of them at least, and
    then either ``settings.max_rounds`` of them or a speedup the rounds agree on, the 95% t
    interval of the mean of their log speedups (one per round: its baseline median over its
    candidate median) within ``settings.target_speedup_error`` on each side. Each round's
    buffers are somewhere new with ``new_placement_per_round``, so the rounds sample what one
    placement would fix for a whole evaluation (docs/timing.md): GPU MODE stops timing on a
    time's standard error; this stops on the speedup's, over what changes between rounds."""
    if min(len(candidate_ms), len(baseline_ms)) >= max(settings.rounds, settings.max_rounds):
        return True
    logs = _round_logs(candidate_ms, baseline_ms, max(2, settings.rounds))
    return logs is not None and _t_interval(logs)[1] <= settings.target_speedup_error


def _round_logs(candidate_ms: list[float], column_ms: list[float], least: int) -> list[float] | None:
    """Each round's log speedup (its column median over its candidate median), once there are ``least``
    rounds; None before, and None while any reading is one no clock gives (it settles and decides
    nothing: the rounds go on to max_rounds)."""
    count = min(len(candidate_ms), len(column_ms))
    ratios = [ratio(b, c) for c, b in zip(candidate_ms[:count], column_ms[:count])]
    if count < least or None in ratios:
        return None
    return [math.log(r) for r in ratios]  # type: ignore[arg-type]


# Pocock's boundary for up to 15 looks at a two-sided 5% level (2.63) over one look's (1.96): repeated looks
# at the rounds (kbench.judge.protocol.rounds) stop on the wrong side of a threshold about as rarely as a single look.
# For looks after every round from the 4th to the 32nd (REPO_TIMING) the boundary, simulated, is 2.65.
LOOKS_FACTOR = 2.63 / Z95


def rounds_decided(candidate_ms: list[float], column_ms: list[float], settings: TimingSettings, at: float,
                   device: str) -> bool:
    """Whether the rounds so far put a column's speedup on one side of ``at``: after ``settings.rounds``
    rounds at least, their 95% t interval, widened by the between-process spread as the verdict's
    interval is (``widen``) and by ``LOOKS_FACTOR``, excludes it. A score that turns on that side (a
    repository task is solved at 95% of the expert's speedup, on the lower bound) needs no more rounds
    once it is decided, and needs them until then however much the rounds disagree. Asked after every
    round, a plain 95% interval would cross a threshold the truth sits on far more often than 2.5% of
    the time; the factor keeps the chance of stopping on the wrong side near what one look has."""
    logs = _round_logs(candidate_ms, column_ms, max(2, settings.rounds))
    if logs is None:
        return False
    centre, half_width = _t_interval(logs)
    return abs(centre - math.log(at)) > _decision_reach(half_width, device)


def _decision_reach(half_width: float, device: str) -> float:
    """How far from a threshold the rounds' mean log speedup must lie to decide it: their t interval's
    half width widened by the between-process spread, and by LOOKS_FACTOR for the repeated looks. Only
    a repository task's score turns on a threshold (Sides.decide_at), so the spread is that track's."""
    return math.hypot(half_width, Z95 * between_process_sd(device, repository=True)) * LOOKS_FACTOR


def round_spread(candidate_ms: list[float], column_ms: list[float]) -> float | None:
    """The standard deviation of the rounds' log speedups (a column's median over the candidate's,
    round by round): how far a speedup moves from one round to the next; None under two rounds, or
    with a reading no clock gives."""
    logs = _round_logs(candidate_ms, column_ms, 2)
    return statistics.stdev(logs) if logs is not None else None


def rounds_to_decide(round_sd: float, distance: float, device: str, most: int = 64) -> int | None:
    """About how many rounds ``rounds_decided`` takes to put a speedup on one side of a threshold
    ``distance`` away in log (1.0 from 0.95: 0.051) when its rounds' log speedups spread by
    ``round_sd``: the fewest whose widened reach falls short of it, None if not within ``most``
    (the between-process spread alone can reach that far). What a task's audit says of a workload
    whose expert cannot be told from 95% of itself."""
    return next((count for count in range(2, most + 1)
                 if _decision_reach(_t_half_width(round_sd, count), device) < distance), None)


def columns_settled(candidate_ms: list[float], columns_ms: dict[str, list[float]], settings: TimingSettings,
                    decide_at: dict[str, float] | None = None, device: str = "cuda") -> bool:
    """``rounds_settled`` for every measured column: each speedup a verdict reports (over eager, a
    compiled column, a repository's base and its expert) as precise as the settings ask. With
    ``decide_at`` (a column's speedup a score turns on), those columns alone decide: each settled
    or ``rounds_decided``; the other columns report what those rounds measured."""
    deciding = {column: at for column, at in (decide_at or {}).items() if column in columns_ms}
    if deciding:
        return all(rounds_settled(candidate_ms, columns_ms[column], settings)
                   or rounds_decided(candidate_ms, columns_ms[column], settings, at, device)
                   for column, at in deciding.items())
    return all(rounds_settled(candidate_ms, column_ms, settings) for column_ms in columns_ms.values())
