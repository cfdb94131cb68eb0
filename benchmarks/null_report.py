"""The report of null_candidates.py's rows (``--report``): how often the intervals hold a null
candidate's truth (1.0) and how wide they are, how far a problem's two scores lie apart, what
fewer rounds or worker pairs would have given, where the handicap lies (by round, by problem,
call by call: call_capture.py) and what an evaluation costs. Reads rows; runs nothing.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from contextlib import contextmanager

from call_capture import per_call_report

from kbench.judge.protocol.pairs import combined_speedup
from kbench.judge.protocol.repeatability import BETWEEN_PROCESS_SD, rounds_interval, widen


def arrangement(r: dict) -> str:
    """How a row was judged: the mode, and the protocol where the row records one (older rows do not)."""
    return r.get("mode", "fresh") + (f" {r['protocol']}" if r.get("protocol") else "")


def pair_differences(judged: list[dict], speedups: list[float] | None = None) -> list[float]:
    """|ln(s1 / s2)| of each problem's first two scores (the rows' own, or ``speedups``, one per
    row): what a second evaluation moves a score by."""
    scores = defaultdict(list)
    for r, speedup in zip(judged, speedups or [r["speedup"] for r in judged]):
        scores[r["problem"]].append(speedup)
    return sorted(abs(math.log(s[0] / s[1])) for s in scores.values() if len(s) >= 2)


def apart(judged: list[dict], scores: list[float]) -> str:
    """How far a problem's two ``scores`` (one per row) lie apart, as a report line's clause; empty
    where no problem was judged twice."""
    differences = pair_differences(judged, scores)
    if not differences:
        return ""
    return f"two scores differ by {statistics.median(differences):.2%} (median), {p90(differences):.2%} (p90); "


def p90(ordered: list[float]) -> float:
    """The 90th percentile of sorted values (the nearest rank)."""
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def widened(r: dict, between_sd: float) -> list[float]:
    """A row's interval as the verdict would give it with another between-process spread: its within
    interval widened (``kbench.judge.protocol.repeatability.widen``), or for a score of several worker pairs,
    the pairs' speedups and within intervals combined (``kbench.judge.protocol.pairs.combined_speedup``)."""
    speedups, withins = pair_rows(r)
    if len(speedups) > 1:
        return combined_speedup(speedups, withins, between_sd)[1]
    with patched_between_sd(between_sd):
        return widen(r["speedup"], r["within"], "cuda")


def pair_rows(r: dict) -> tuple[list[float], list[list[float]]]:
    """Each worker pair's speedup and within interval in a row (one pair: the row's own)."""
    pairs = r.get("pairs") or {}
    if pairs.get("pair_speedups"):
        return pairs["pair_speedups"], pairs["pair_intervals_within"]
    return [r["speedup"]], [r["within"]]


def first_pair_rounds(r: dict) -> dict:
    """A row with only its first worker pair's rounds (a score of several pairs keeps all of theirs,
    one pair's after another): what the rounds' own analyses read, within one pair of processes."""
    count = len(pair_rows(r)[0])
    rounds = r.get("rounds") or {}
    if count < 2 or not all(rounds.get(side) for side in ("candidate", "eager")):
        return r
    return {**r, "rounds": {side: values[:len(values) // count] for side, values in rounds.items()}}


def fewer_pairs(judged: list[dict], between_sd: float | None) -> None:
    """What the first k worker pairs alone would have given, for each k below the fewest a row has:
    the score (their speedups' geometric mean), its error, how far a problem's two scores lie apart,
    and the interval's coverage of 1.0 and median width (as ``combined_speedup`` gives it)."""
    counts = [len(pair_rows(r)[0]) for r in judged]
    if not counts or min(counts) < 2:
        return
    spread = BETWEEN_PROCESS_SD["cuda"] if between_sd is None else between_sd
    pooled, within = pair_spread(judged)
    between = math.sqrt(max(0.0, pooled ** 2 - within ** 2))
    print(f"  a pair's log speedup about its score's mean: sd {pooled:.2%} (pooled over {len(judged)} scores), "
          f"within a pair {within:.2%} (its within interval, rms), so between processes about {between:.2%} "
          f"(what --between-sd and kbench.judge.protocol.repeatability.BETWEEN_PROCESS_SD stand for)")
    print(f"  the first k worker pairs alone (between-process spread {spread:.2%}):")
    for k in range(1, min(counts) + 1):
        scored = [combined_speedup(*(each[:k] for each in pair_rows(r)), spread) for r in judged]
        scores = [score for score, _, _ in scored]
        held = sum(low <= 1.0 <= high for _, (low, high), _ in scored)
        width = statistics.median((high - low) / score for score, (low, high), _ in scored)
        print(f"    k={k:2d}: score's error {rms_log(scores):.2%} (rms); {apart(judged, scores)}holds 1.0 in "
              f"{held / len(judged):.0%}; median width {width:.2%}")


def pair_spread(judged: list[dict]) -> tuple[float, float]:
    """The standard deviation of a worker pair's log speedup about its score's mean, pooled over the
    rows of several pairs, and a pair's own noise (its within interval's half width in logs over
    1.96, root mean square): what is left between them is the between-process offset."""
    squares, degrees, halves = 0.0, 0, []
    for r in judged:
        speedups, withins = pair_rows(r)
        if len(speedups) < 2:
            continue
        logs = [math.log(x) for x in speedups]
        mean = statistics.fmean(logs)
        squares += sum((x - mean) ** 2 for x in logs)
        degrees += len(logs) - 1
        halves += [math.log(high / low) / 2 / 1.96 for low, high in withins]
    if not degrees:
        return math.nan, math.nan
    return math.sqrt(squares / degrees), math.sqrt(statistics.fmean(h * h for h in halves))


@contextmanager
def patched_between_sd(between_sd: float | None):
    saved = dict(BETWEEN_PROCESS_SD)
    if between_sd is not None:
        BETWEEN_PROCESS_SD["cuda"] = between_sd
    try:
        yield
    finally:
        BETWEEN_PROCESS_SD.update(saved)


def fewer_rounds(judged: list[dict], between_sd: float | None) -> None:
    """What the first k rounds alone would have given, for each k: the score (eager's median round
    over the candidate's, as near the verdict's pooled medians as the rows' round medians allow; a
    mean of the rounds' log speedups would follow one round a placement made 10% slower), its error
    (a null candidate's truth is 1.0) and how far a problem's two scores lie apart, and the rounds'
    95% t interval widened by the between-process spread (as the verdict's is): how often it holds
    1.0, and its median width. One run with many rounds so prices every count of rounds below it."""
    counts = [min(len((r.get("rounds") or {}).get(side) or []) for side in ("candidate", "eager")) for r in judged]
    if not counts or max(counts) < 3:
        return
    print("  the first k rounds alone (score: eager's median round over the candidate's; interval: the rounds' "
          "t interval, widened):")
    with patched_between_sd(between_sd):
        for k in range(2, min(counts) + 1):
            scores, held, widths = [], 0, []
            for r in judged:
                eager, candidate = r["rounds"]["eager"][:k], r["rounds"]["candidate"][:k]
                score = rounds_score(r, k)
                low, high = rounds_interval([[e] for e in eager], [[c] for c in candidate])
                low, high = widen(score, [min(low, score), max(high, score)], "cuda")
                scores.append(score)
                held += low <= 1.0 <= high
                widths.append((high - low) / score)
            print(f"    k={k:2d}: score's error {rms_log(scores):.2%} (rms); {apart(judged, scores)}holds 1.0 in "
                  f"{held / len(judged):.0%}; median width {statistics.median(widths):.2%}")


def with_rounds(judged: list[dict]) -> list[dict]:
    """The rows that kept at least two rounds, as many on each side (older rows kept none)."""
    def count(r: dict, side: str) -> int:
        return len((r.get("rounds") or {}).get(side) or [])

    return [r for r in judged if count(r, "candidate") == count(r, "eager") >= 2]


def rounds_score(r: dict, count: int) -> float:
    """Eager's median round over the candidate's, from the first ``count`` rounds of a row."""
    return statistics.median(r["rounds"]["eager"][:count]) / statistics.median(r["rounds"]["candidate"][:count])


def split_between_pairs(judged: list[dict]) -> None:
    """What a protocol splitting its rounds between two worker pairs would score, from each
    problem's first two evaluations (two pairs of processes, started apart in time): the first
    half of each one's rounds scored (eager's median round over the candidate's) and the two
    log scores averaged, against one evaluation scoring all its rounds; and the two verdicts
    averaged (twice the cost). Rounds share their processes' offset; two pairs average two
    offsets, which more rounds of one pair never do."""
    by_problem = defaultdict(list)
    for r in with_rounds(judged):
        by_problem[r["problem"]].append(r)
    pairs = [each[:2] for each in by_problem.values() if len(each) >= 2]
    if not pairs:
        return
    k = min(len(r["rounds"][side]) for pair in pairs for r in pair for side in ("candidate", "eager"))
    one = [rounds_score(r, k) for pair in pairs for r in pair]
    split = [math.sqrt(rounds_score(a, k // 2) * rounds_score(b, k // 2)) for a, b in pairs]
    both = [math.sqrt(a["speedup"] * b["speedup"]) for a, b in pairs]
    print(f"  the rounds split between two worker pairs ({len(pairs)} problems judged twice): {k // 2} rounds in "
          f"each of two evaluations, combined, err by {rms_log(split):.2%} (rms); one evaluation of {k} rounds by "
          f"{rms_log(one):.2%}; the two verdicts averaged by {rms_log(both):.2%}")


def round_estimators(judged: list[dict]) -> None:
    """The score's error had the verdict weighed every round alike, from the rounds' medians, rather
    than pooling the calls (where a round with more calls, often a noisier one, weighs more)."""
    kept = with_rounds(judged)
    if not kept:
        return
    ratios = [[e / c for c, e in zip(r["rounds"]["candidate"], r["rounds"]["eager"])] for r in kept]
    scores = {"the median round ratio": [statistics.median(each) for each in ratios],
              "the rounds' mean log ratio": [statistics.geometric_mean(each) for each in ratios]}
    print(f"  the score from the rounds' medians instead of the pooled calls ({len(kept)} evaluations), error "
          "(rms): " + ", ".join(f"{name} {rms_log(values):.2%}" for name, values in scores.items()))


def bias_by_round(judged: list[dict]) -> None:
    """The mean ln(eager round / candidate round) at each position of a pair's rounds, over every
    pair of every row, with its standard error, and each side's round against its pair's median
    round: a null candidate's small handicap (a negative mean ln(speedup)), if it lives in the first
    rounds (a GPU whose clocks settle as the timing goes on, the candidate being timed first in every
    round), shows here as a trend by position; and the problems whose first round it is largest in,
    with their time per call (what kind of kernel it lives in)."""
    ratios, sides = defaultdict(list), {"candidate": defaultdict(list), "eager": defaultdict(list)}
    by_problem = defaultdict(list)  # (first round's ratio, the later rounds' mean ratio, the pair's median ms)
    for r in with_rounds(judged):
        count = len(pair_rows(r)[0])
        candidate, eager = r["rounds"]["candidate"], r["rounds"]["eager"]
        per_pair = len(candidate) // count
        if per_pair * count != len(candidate):
            continue  # pairs of different round counts: their positions do not line up
        for start in range(0, len(candidate), per_pair):
            pair = {"candidate": candidate[start:start + per_pair], "eager": eager[start:start + per_pair]}
            middle = statistics.median(pair["candidate"] + pair["eager"])
            for position, (c, e) in enumerate(zip(pair["candidate"], pair["eager"])):
                ratios[position].append(math.log(e / c))
                for side, value in (("candidate", c), ("eager", e)):
                    sides[side][position].append(math.log(value / middle))
            later = [math.log(e / c) for c, e in zip(pair["candidate"][1:], pair["eager"][1:])]
            if later:
                by_problem[r["problem"]].append((math.log(pair["eager"][0] / pair["candidate"][0]),
                                                 statistics.fmean(later), middle))
    positions = [p for p in sorted(ratios) if len(ratios[p]) >= 2]
    if not positions:
        return
    print(f"  by round position ({len(ratios[positions[0]])} worker pairs): mean ln(eager / candidate) "
          + ", ".join(f"{p + 1}: {statistics.fmean(ratios[p]):+.2%} ± "
                      f"{statistics.stdev(ratios[p]) / math.sqrt(len(ratios[p])):.2%}" for p in positions))
    for side, values in sides.items():
        print(f"    {side}'s round against its pair's median round: "
              + ", ".join(f"{p + 1}: {statistics.fmean(values[p]):+.2%}" for p in positions))
    first_round = sorted((statistics.fmean(first for first, _, _ in pairs), problem, pairs)
                         for problem, pairs in by_problem.items())
    print("    largest in the first round: " + ", ".join(
        f"{problem} {first:+.2%} (later rounds {statistics.fmean(rest for _, rest, _ in pairs):+.2%}, "
        f"{statistics.median(ms for _, _, ms in pairs):.2f} ms, {len(pairs)} pairs)"
        for first, problem, pairs in first_round[:5]))


def bias_by_problem(judged: list[dict]) -> None:
    """The problems whose null scores lie furthest below 1 on average, with how many of their
    scores lie below 1: a handicap that every score of a problem shares is systematic, and no
    count of pairs or rounds averages it away (it is what an interval narrowed by them misses)."""
    scores = defaultdict(list)
    for r in judged:
        scores[r["problem"]].append(math.log(r["speedup"]))
    lowest = sorted((statistics.fmean(logs), problem, logs) for problem, logs in scores.items() if len(logs) >= 2)
    if lowest:
        print("  furthest below 1, by problem: " + ", ".join(
            f"{problem} {mean:+.2%} ({sum(x < 0 for x in logs)} of {len(logs)} scores below 1)"
            for mean, problem, logs in lowest[:5]))


def rms_log(speedups: list[float]) -> float:
    """The root mean square of ln(speedup): a null candidate's whole error, between processes included."""
    return math.sqrt(statistics.fmean(math.log(s) ** 2 for s in speedups))


def round_spread(judged: list[dict]) -> float | None:
    """Within each evaluation, the standard deviation over its rounds of ln(eager round median /
    candidate round median); its root mean square over the evaluations (None: no rounds kept).
    Beside the two scores' difference it says how much of the spread between evaluations a
    round already sees (what a round with a new placement would average away)."""
    variances = [statistics.variance([math.log(e / c) for c, e in zip(r["rounds"]["candidate"], r["rounds"]["eager"])])
                 for r in with_rounds(judged)]
    return math.sqrt(statistics.mean(variances)) if variances else None


def report(rows: list[dict], between_sd: float | None = None) -> None:
    arrangements = sorted({arrangement(r) for r in rows})
    for name in arrangements if len(arrangements) > 1 else []:
        print(f"{name}:")
        report([r for r in rows if arrangement(r) == name], between_sd)
    judged = [r for r in rows if r["status"] == "correct" and r["interval"] and r["within"]]
    print(f"{len(judged)} null evaluations ({len(rows) - len(judged)} not judged correct) "
          f"of {len({r['problem'] for r in judged})} problems on {judged[0]['device_name'] if judged else '-'}")
    intervals = {"interval": [r["interval"] for r in judged], "within": [r["within"] for r in judged]}
    if between_sd is not None:  # what the verdict's interval would be with another between-process spread
        intervals[f"within widened by {between_sd:.2%}"] = [widened(r, between_sd) for r in judged]
    for name, held_intervals in intervals.items():
        held = sum(low <= 1.0 <= high for low, high in held_intervals)
        width = statistics.median((high - low) / r["speedup"]
                                  for (low, high), r in zip(held_intervals, judged)) if judged else 0.0
        print(f"  {name:<9} holds 1.0 in {held} of {len(judged)} ({held / max(len(judged), 1):.0%}); "
              f"median width {width:.2%} of the speedup")
    by_round = [first_pair_rounds(r) for r in judged]  # a score of several pairs holds every pair's rounds
    spread = round_spread(by_round)
    if spread is not None:
        counts = sorted(len((r.get("rounds") or {}).get("candidate") or []) for r in by_round)
        print(f"  between rounds of one evaluation, the log speedup's standard deviation: {spread:.2%} "
              f"(root mean square over evaluations); rounds per evaluation: median {statistics.median(counts):g} "
              f"({counts[0]}-{counts[-1]})")
    for side in ("candidate", "eager"):
        counts = sorted(((r.get("calls") or {}).get(side) or {}).get("count") or 0 for r in judged)
        if counts and counts[-1]:
            print(f"  {side}'s timed calls per evaluation (all rounds): median {statistics.median(counts):g} "
                  f"({counts[0]}-{counts[-1]})")
    spans = {key: [v for r in judged if isinstance(v := (r.get("spans_ms") or {}).get(key), (int, float))]
             for key in ("candidate_excess_ms", "candidate_digest_ms")}
    if all(spans.values()):
        print("  a timed call's time beside the call, median over evaluations: "
              + ", ".join(f"{key} {statistics.median(values):.2f} ms" for key, values in spans.items()))
    if judged:  # needs no second score: the truth is known
        errors = sorted(abs(math.log(r["speedup"])) for r in judged)
        print(f"  a score's error |ln(speedup)|: {rms_log([r['speedup'] for r in judged]):.2%} root mean square, "
              f"{statistics.median(errors):.2%} at the median, {p90(errors):.2%} at p90; mean ln(speedup) "
              f"{statistics.fmean(math.log(r['speedup']) for r in judged):+.2%}")
    differences = pair_differences(judged)
    if differences:  # issue 30's goal: at most 0.25% at the median and 1.0% at p90
        print(f"  two scores of a problem differ by {statistics.median(differences):.2%} at the median, "
              f"{p90(differences):.2%} at p90, {differences[-1]:.2%} at most ({len(differences)} problems)")
    fewer_rounds(by_round, between_sd)
    fewer_pairs(judged, between_sd)
    split_between_pairs(by_round)
    round_estimators(by_round)
    bias_by_round(judged)
    bias_by_problem(judged)
    per_call_report(judged)
    timed = [r for r in rows if r.get("wall_seconds")]
    if timed:  # what an evaluation costs (issue 16's figures), from the same runs
        walls = sorted(r["wall_seconds"] for r in timed)
        phases = sorted({p for r in timed for p in r["phase_seconds"]})
        medians = {p: statistics.median(r["phase_seconds"].get(p, 0.0) for r in timed) for p in phases}
        print(f"  wall per evaluation: median {statistics.median(walls):.1f} s ({walls[0]:.1f}-{walls[-1]:.1f} s); "
              "median per phase: " + ", ".join(f"{p} {t:.2f} s" for p, t in medians.items()))
        for level in sorted({r["problem"].split("/")[0] for r in timed}):
            at_level = [r["wall_seconds"] for r in timed if r["problem"].startswith(level + "/")]
            print(f"  wall per evaluation, {level}: median {statistics.median(at_level):.1f} s of {len(at_level)}")
