"""Does the 95% speedup interval hold the truth 95% of the time? Null candidates answer it:
the problem's own reference submitted as the candidate (its true speedup over eager is 1),
judged under --policy lenient (a plain-PyTorch candidate is flagged there, not rejected),
each scored twice by independent evaluations. The report gives, for the verdict's
``speedup_interval`` (between-process spread included, kbench.judge.protocol.repeatability) and for
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
evaluations, each in a fresh pair of workers (kbench.judge.protocol.pairs); each pair's speedup and
within interval are kept in the row, and the report prices every count of pairs below it.
``--per-call`` keeps every timed call of both sides (call_capture.py), for where a null candidate's
handicap lives, call by call. The report itself is null_report.py's.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from call_capture import CallCapture
from null_report import report

import kbench
from kbench.judge import LocalExecutor
from kbench.judge.processes.devices import resolve_device
from kbench.judge.processes.sandbox import find_sandbox
from kbench.judge.processes.spares import Spares
from kbench.judge.protocol.timing import TimingSettings
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
            # each worker pair's speedup and within interval, where the score averages several (kbench.judge.protocol.pairs)
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
            # where a timed call's wall time goes besides the call (medians, ms): the judge's clock less the
            # reported time (excess), and the judge's clock from the draw asked for to "go", from "go" to
            # "done" (the call, its output packed, the messages), and from "done" to the output read
            "spans_ms": {f"{side}_{span}_ms": (verdict.timing or {}).get(f"{side}_{span}_ms")
                         for side in ("candidate", "eager") for span in ("excess", "draw", "go", "read")},
            # how many of the candidate's timed calls the judge's clock timed (kbench.judge.trusted.calls.trusted_times)
            "calls_timed_by_judge": (verdict.timing or {}).get("calls_timed_by_judge")}


def protocol_name(timing: TimingSettings) -> str:
    default = TimingSettings()
    return (f"rounds={timing.rounds}" + (",placed" if timing.new_placement_per_round else "")
            + (f",max_rounds={timing.max_rounds},target={timing.target_speedup_error:g}" if timing.max_rounds else "")
            + (f",min_calls={timing.min_calls}" if timing.min_calls != default.min_calls else "")
            + (f",target_rel_error={timing.target_rel_error:g}"
               if timing.target_rel_error != default.target_rel_error else "")
            + (f",warmup_seconds={timing.warmup_seconds:g}" if timing.warmup_seconds != default.warmup_seconds else "")
            + (f",launch_lead_us={timing.launch_lead_us:g}" if timing.launch_lead_us else "")
            + ("" if timing.replay_settling else ",no_replay_settling")
            + (f",pairs={timing.pairs}" if timing.pairs > 1 else "")
            + (f",max_pairs={timing.max_pairs},target_pair={timing.target_pair_error:g}" if timing.max_pairs else ""))


def judge_all(problems: list[str], repeats: int, device: str, mode: str, directory: Path, timing: TimingSettings):
    """Each problem's row: ``fresh``, one evaluation at a time, each starting its own
    workers (a score of several pairs starts each later pair's during the one before,
    kbench.judge.processes.spares.for_pairs); ``batch``, through ``kbench.evaluate_many`` with workers started ahead
    (kbench.judge.processes.spares); ``ab``, each problem judged both ways in turn (order
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
                        help="evaluations, each in fresh workers, a score averages at least (kbench.judge.protocol.pairs)")
    parser.add_argument("--max-pairs", type=int, default=TimingSettings.max_pairs,
                        help="more of them, up to this many, until the interval is within --target-pair-error")
    parser.add_argument("--target-pair-error", type=float, default=TimingSettings.target_pair_error,
                        help="with --max-pairs: the 95%% interval's reach from the score at which they stop")
    parser.add_argument("--per-call", action="store_true",
                        help="keep each timed call of both sides in the row, with whether a checked call came just "
                             "before it (call_capture.py): where the null candidate's handicap lives")
    parser.add_argument("--lead-us", type=float, default=0.0,
                        help="TimingSettings.launch_lead_us: a GPU sleep queued ahead of each call's start event")
    parser.add_argument("--replay-settling", action=argparse.BooleanOptionalAction, default=True,
                        help="TimingSettings.replay_settling: --no-replay-settling leaves the settling calls out of "
                             "eager's replay (an experiment)")
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
                                    replay_settling=args.replay_settling,
                                    pairs=args.pairs, max_pairs=args.max_pairs,
                                    target_pair_error=args.target_pair_error)
            with CallCapture() if args.per_call else nullcontext() as capture:
                for done in judge_all(args.problems, args.repeats, args.device, args.mode, Path(tmp), timing):
                    if capture is not None:
                        done["per_call"] = capture.take(done["problem"], done["rounds"]["eager"],
                                                        len(done["pairs"]["pair_speedups"] or [None]))
                    print(json.dumps({k: v for k, v in done.items() if k != "per_call"}), flush=True)
                    with open(args.out, "a") as out:
                        out.write(json.dumps(done) + "\n")
        print(f"{len(args.problems) * args.repeats} evaluations in {time.monotonic() - started:.1f} s of wall time")
    report([json.loads(line) for line in args.out.read_text().splitlines() if line.strip()], args.between_sd)


if __name__ == "__main__":
    main()
