"""Does the 95% speedup interval hold the truth 95% of the time? Null candidates answer it:
the problem's own reference submitted as the candidate (its true speedup over eager is 1),
judged under --policy lenient (a plain-PyTorch candidate is flagged there, not rejected),
each scored twice by independent evaluations. The report gives, for the verdict's
``speedup_interval`` (between-process spread included, kbench.judge.repeatability) and for
``speedup_interval_within`` (this evaluation's calls alone), how often the interval holds 1.0
and its median width. Each evaluation is appended to a JSON-lines file as it finishes:

    PYTHONPATH=src python3 benchmarks/null_candidates.py --out null.jsonl [--problems ...] [--repeats 2] [--mode fresh|batch|ab]
        [--rounds N] [--placed | --no-placed] [--max-rounds M --target 0.0025] [--min-calls N] [--target-rel-error E]
        [--pairs N] [--max-pairs M --target-pair-error 0.005] [--warmup-seconds S] [--per-call]
    PYTHONPATH=src python3 benchmarks/null_candidates.py --out null.jsonl --report

The report also gives what issue 30 asks of a protocol: the two scores of each problem, how far apart
(``|ln(s1 / s2)|``, median and p90 over the problems), and the median wall time per evaluation by level.
``--placed`` (``--no-placed``) times with (without) a new placement of every buffer per round
(TimingSettings.new_placement_per_round; without, as the default protocol)
and ``--rounds`` sets the rounds: the protocol each row was judged with is kept in the row.
``--pairs`` (``--max-pairs``) makes a score the average of that many (up to that many)
evaluations, each in a fresh pair of workers (kbench.judge.pairs); each pair's speedup and
within interval are kept in the row, and the report prices every count of pairs below it.
``--per-call`` keeps every timed call of both sides (call_capture.py), for where a null candidate's
handicap lives, call by call.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from pathlib import Path

from call_capture import CallCapture, per_call_report

import kbench
from kbench.judge import LocalExecutor
from kbench.judge.devices import resolve_device
from kbench.judge.pairs import combined_speedup
from kbench.judge.repeatability import BETWEEN_PROCESS_SD, rounds_interval, widen
from kbench.judge.sandbox import find_sandbox
from kbench.judge.spares import Spares
from kbench.judge.timing import TimingSettings
from kbench.suite import find_problem

LEVEL1 = [  # issue 30's 20 level-1 problems: elementwise, reductions, norms, matrix products, convolutions, pooling
    "level1/relu", "level1/softmax", "level1/gelu", "level1/layer_norm", "level1/rms_norm", "level1/sum_dim",
    "level1/matmul_square", "level1/matmul_batched", "level1/matvec", "level1/conv2d", "level1/conv2d_depthwise",
    "level1/maxpool2d", "level1/avgpool3d", "level1/group_norm", "level1/cross_entropy", "level1/argmax_dim",
    "level1/log_softmax", "level1/swish", "level1/matmul_large_k", "level1/conv_transpose3d",
]
LEVEL2 = [  # and 10 of level 2: a library GEMM or convolution with its epilogue, and a recurrent cell
    "level2/gemm_bias_relu", "level2/conv2d_relu", "level2/conv2d_batch_norm_relu", "level2/linear_gelu",
    "level2/linear_swiglu", "level2/linear_residual_layer_norm", "level2/conv3d_relu_max_pool",
    "level2/linear_log_softmax", "level2/conv2d_group_norm_silu", "level2/lstm_cell",
]
DEFAULT_PROBLEMS = LEVEL1 + LEVEL2


def null_candidate(problem_id: str, directory: Path) -> Path:
    """The problem's own Model submitted as its candidate."""
    candidate = directory / f"{problem_id.replace('/', '_')}_null.py"
    candidate.write_text(find_problem(problem_id).source + "\n\nModelNew = Model\n")
    return candidate


def row(problem_id: str, verdict: kbench.Verdict, mode: str, timing: TimingSettings) -> dict:
    return {"problem": problem_id, "mode": mode, "protocol": protocol_name(timing),
            "status": verdict.status, "reason": verdict.reason.splitlines()[0],
            "device_name": verdict.device_name, "speedup": verdict.speedup.get("eager"),
            "interval": verdict.speedup_interval.get("eager"), "within": verdict.speedup_interval_within.get("eager"),
            "wall_seconds": verdict.wall_seconds, "phase_seconds": verdict.phase_seconds, "handover": verdict.handover,
            # each worker pair's speedup and within interval, where the score averages several (kbench.judge.pairs)
            "pairs": {key: ((verdict.timing or {}).get(key) or {}).get("eager")
                      for key in ("pair_speedups", "pair_intervals_within")},
            # each round's medians, to set the spread between rounds (placements) beside that between evaluations
            "rounds": {"candidate": (verdict.timing or {}).get("rounds"),
                       "eager": ((verdict.baselines.get("eager") or {}).get("timing") or {}).get("rounds")},
            # how many calls were timed and how precisely (the median's relative standard error): what a
            # round's median rests on, beside how far the rounds' medians move
            "calls": {side: {key: (timing or {}).get(key) for key in ("count", "rel_error", "stop_reason")}
                      for side, timing in (("candidate", verdict.timing),
                                           ("eager", (verdict.baselines.get("eager") or {}).get("timing")))},
            # where a timed call's wall time goes besides the call (medians, ms): drawing the inputs, the L2
            # flush and the messages (excess), and the fingerprints of output and inputs (digest)
            "spans_ms": {key: (verdict.timing or {}).get(key) for key in (
                "candidate_excess_ms", "eager_excess_ms", "candidate_digest_ms", "eager_digest_ms")}}


def protocol_name(timing: TimingSettings) -> str:
    default = TimingSettings()
    return (f"rounds={timing.rounds}" + (",placed" if timing.new_placement_per_round else "")
            + (f",max_rounds={timing.max_rounds},target={timing.target_speedup_error:g}" if timing.max_rounds else "")
            + (f",min_calls={timing.min_calls}" if timing.min_calls != default.min_calls else "")
            + (f",target_rel_error={timing.target_rel_error:g}"
               if timing.target_rel_error != default.target_rel_error else "")
            + (f",warmup_seconds={timing.warmup_seconds:g}" if timing.warmup_seconds != default.warmup_seconds else "")
            + (f",launch_lead_us={timing.launch_lead_us:g}" if timing.launch_lead_us else "")
            + (f",pairs={timing.pairs}" if timing.pairs > 1 else "")
            + (f",max_pairs={timing.max_pairs},target_pair={timing.target_pair_error:g}" if timing.max_pairs else ""))


def judge_all(problems: list[str], repeats: int, device: str, mode: str, directory: Path, timing: TimingSettings):
    """Each problem's row: ``fresh``, one evaluation at a time, each starting its own
    workers (a score of several pairs starts each later pair's during the one before,
    kbench.judge.spares.for_pairs); ``batch``, through ``kbench.evaluate_many`` with workers started ahead
    (kbench.judge.spares); ``ab``, each problem judged both ways in turn (order
    alternating), spares started just before and closed just after each ``ahead`` one,
    so that what differs between the two is only the spares (their start, unlike in a
    batch, is in the evaluation's load phase)."""
    jobs = [problem_id for _ in range(repeats) for problem_id in problems]
    if mode == "batch":
        pairs = [(problem_id, null_candidate(problem_id, directory)) for problem_id in jobs]
        executor = LocalExecutor([device], ahead=True)
        for index, verdict in kbench.evaluate_many(pairs, executor=executor, policy="lenient", timing=timing):
            yield row(jobs[index], verdict, "batch", timing)
        return
    for number, problem_id in enumerate(jobs):
        candidate = null_candidate(problem_id, directory)
        arms = ["fresh"] if mode == "fresh" else (["fresh", "ahead"] if number % 2 == 0 else ["ahead", "fresh"])
        for arm in arms:
            spares = Spares(resolve_device(device), find_sandbox(), depth=1) if arm == "ahead" else None
            try:
                if spares is not None:
                    spares.prepare()  # started now; the evaluation's load waits for it
                verdict = kbench.evaluate(problem_id, candidate, device, policy="lenient", timing=timing, spares=spares)
            except Exception as failure:  # noqa: BLE001 - a fault of the judge is a row; the device call goes on
                yield {"problem": problem_id, "mode": arm, "protocol": protocol_name(timing), "status": "judge_error",
                       "reason": f"{type(failure).__name__}: {failure}", "interval": None, "within": None}
            else:
                yield row(problem_id, verdict, arm, timing)
            finally:
                if spares is not None:
                    spares.close()


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


def p90(ordered: list[float]) -> float:
    """The 90th percentile of sorted values (the nearest rank)."""
    return ordered[min(len(ordered) - 1, math.ceil(0.9 * len(ordered)) - 1)]


def widened(r: dict, between_sd: float) -> list[float]:
    """A row's interval as the verdict would give it with another between-process spread: its within
    interval widened (``kbench.judge.repeatability.widen``), or for a score of several worker pairs,
    the pairs' speedups and within intervals combined (``kbench.judge.pairs.combined_speedup``)."""
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
          f"(what --between-sd and kbench.judge.repeatability.BETWEEN_PROCESS_SD stand for)")
    print(f"  the first k worker pairs alone (between-process spread {spread:.2%}):")
    for k in range(1, min(counts) + 1):
        scored = [combined_speedup(*(each[:k] for each in pair_rows(r)), spread) for r in judged]
        scores = [score for score, _, _ in scored]
        held = sum(low <= 1.0 <= high for _, (low, high), _ in scored)
        width = statistics.median((high - low) / score for score, (low, high), _ in scored)
        differences = pair_differences(judged, scores)
        apart = (f"two scores differ by {statistics.median(differences):.2%} (median), {p90(differences):.2%} "
                 f"(p90); " if differences else "")
        print(f"    k={k:2d}: score's error {rms_log(scores):.2%} (rms); {apart}holds 1.0 in "
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
            differences = pair_differences(judged, scores)
            apart = (f"two scores differ by {statistics.median(differences):.2%} (median), {p90(differences):.2%} "
                     f"(p90); " if differences else "")
            print(f"    k={k:2d}: score's error {rms_log(scores):.2%} (rms); {apart}holds 1.0 in "
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--problems", nargs="*", default=DEFAULT_PROBLEMS)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--mode", choices=["fresh", "batch", "ab"], default="fresh",
                        help="fresh: one at a time; batch: evaluate_many with workers ahead; ab: both, in turn")
    parser.add_argument("--rounds", type=int, default=TimingSettings.rounds, help="rounds of the protocol")
    parser.add_argument("--placed", action=argparse.BooleanOptionalAction,
                        default=TimingSettings.new_placement_per_round,
                        help="a new placement of the buffers every round (default: as the default protocol)")
    parser.add_argument("--max-rounds", type=int, default=0,
                        help="more rounds, up to this many, until the rounds' speedups agree (0: --rounds always)")
    parser.add_argument("--target", type=float, default=TimingSettings.target_speedup_error,
                        help="with --max-rounds: the rounds' 95%% half-width at which they stop (0.0025: 0.25%%)")
    parser.add_argument("--warmup-seconds", type=float, default=TimingSettings.warmup_seconds,
                        help="the candidate's warm-up before its first round (the first-round handicap, --report)")
    parser.add_argument("--min-calls", type=int, default=TimingSettings.min_calls, help="timed calls a round takes at least")
    parser.add_argument("--target-rel-error", type=float, default=TimingSettings.target_rel_error,
                        help="a round stops once its median's relative standard error is this small (or its budget ends)")
    parser.add_argument("--pairs", type=int, default=TimingSettings.pairs,
                        help="evaluations, each in fresh workers, a score averages at least (kbench.judge.pairs)")
    parser.add_argument("--max-pairs", type=int, default=TimingSettings.max_pairs,
                        help="more of them, up to this many, until the interval is within --target-pair-error")
    parser.add_argument("--target-pair-error", type=float, default=TimingSettings.target_pair_error,
                        help="with --max-pairs: the 95%% interval's reach from the score at which they stop")
    parser.add_argument("--per-call", action="store_true",
                        help="keep each timed call of both sides in the row, with whether a checked call came just "
                             "before it (call_capture.py): where the null candidate's handicap lives")
    parser.add_argument("--lead-us", type=float, default=0.0,
                        help="TimingSettings.launch_lead_us: a GPU sleep queued ahead of each call's start event")
    parser.add_argument("--report", action="store_true", help="Only print the report of --out.")
    parser.add_argument("--between-sd", type=float, default=None,
                        help="in the report, also the intervals with this between-process spread (0.002: 0.2%%)")
    args = parser.parse_args()
    if not args.report:
        started = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            timing = TimingSettings(rounds=args.rounds, new_placement_per_round=args.placed,
                                    max_rounds=args.max_rounds, target_speedup_error=args.target,
                                    min_calls=args.min_calls, target_rel_error=args.target_rel_error,
                                    warmup_seconds=args.warmup_seconds, launch_lead_us=args.lead_us,
                                    pairs=args.pairs, max_pairs=args.max_pairs,
                                    target_pair_error=args.target_pair_error)
            with CallCapture() if args.per_call else nullcontext() as capture:
                for done in judge_all(args.problems, args.repeats, args.device, args.mode, Path(tmp), timing):
                    if capture is not None:
                        done["per_call"] = capture.take(done["problem"], done["rounds"]["candidate"],
                                                        len(done["pairs"]["pair_speedups"] or [None]))
                    print(json.dumps({k: v for k, v in done.items() if k != "per_call"}), flush=True)
                    with open(args.out, "a") as out:
                        out.write(json.dumps(done) + "\n")
        print(f"{len(args.problems) * args.repeats} evaluations in {time.monotonic() - started:.1f} s of wall time")
    report([json.loads(line) for line in args.out.read_text().splitlines() if line.strip()], args.between_sd)


if __name__ == "__main__":
    main()
