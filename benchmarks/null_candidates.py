"""Does the 95% speedup interval hold the truth 95% of the time? Null candidates answer it:
the problem's own reference submitted as the candidate (its true speedup over eager is 1),
judged under --policy lenient (a plain-PyTorch candidate is flagged there, not rejected),
each scored twice by independent evaluations. The report gives, for the verdict's
``speedup_interval`` (between-process spread included, kbench.judge.repeatability) and for
``speedup_interval_within`` (this evaluation's calls alone), how often the interval holds 1.0
and its median width. Each evaluation is appended to a JSON-lines file as it finishes:

    PYTHONPATH=src python3 benchmarks/null_candidates.py --out null.jsonl [--problems ...] [--repeats 2] [--mode fresh|batch|ab]
    PYTHONPATH=src python3 benchmarks/null_candidates.py --out null.jsonl --report
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import kbench
from kbench.judge import LocalExecutor
from kbench.judge.devices import resolve_device
from kbench.judge.sandbox import find_sandbox
from kbench.judge.spares import Spares
from kbench.suite import find_problem

DEFAULT_PROBLEMS = [
    "level1/relu", "level1/softmax", "level1/gelu", "level1/layer_norm", "level1/rms_norm", "level1/sum_dim",
    "level1/matmul_square", "level1/matmul_batched", "level1/matvec", "level1/conv2d", "level1/conv2d_depthwise",
    "level1/maxpool2d", "level1/avgpool3d", "level1/group_norm", "level1/cross_entropy", "level1/argmax_dim",
]


def null_candidate(problem_id: str, directory: Path) -> Path:
    """The problem's own Model submitted as its candidate."""
    candidate = directory / f"{problem_id.replace('/', '_')}_null.py"
    candidate.write_text(find_problem(problem_id).source + "\n\nModelNew = Model\n")
    return candidate


def row(problem_id: str, verdict: kbench.Verdict, mode: str) -> dict:
    return {"problem": problem_id, "mode": mode, "status": verdict.status, "reason": verdict.reason.splitlines()[0],
            "device_name": verdict.device_name, "speedup": verdict.speedup.get("eager"),
            "interval": verdict.speedup_interval.get("eager"), "within": verdict.speedup_interval_within.get("eager"),
            "wall_seconds": verdict.wall_seconds, "phase_seconds": verdict.phase_seconds, "handover": verdict.handover}


def judge_all(problems: list[str], repeats: int, device: str, mode: str, directory: Path):
    """Each problem's row: ``fresh``, one evaluation at a time, each starting its own
    workers; ``batch``, through ``kbench.evaluate_many`` with workers started ahead
    (kbench.judge.spares); ``ab``, each problem judged both ways in turn (order
    alternating), spares started just before and closed just after each ``ahead`` one,
    so that what differs between the two is only the spares (their start, unlike in a
    batch, is in the evaluation's load phase)."""
    jobs = [problem_id for _ in range(repeats) for problem_id in problems]
    if mode == "batch":
        pairs = [(problem_id, null_candidate(problem_id, directory)) for problem_id in jobs]
        executor = LocalExecutor([device], ahead=True)
        for index, verdict in kbench.evaluate_many(pairs, executor=executor, policy="lenient"):
            yield row(jobs[index], verdict, "batch")
        return
    for number, problem_id in enumerate(jobs):
        candidate = null_candidate(problem_id, directory)
        arms = ["fresh"] if mode == "fresh" else (["fresh", "ahead"] if number % 2 == 0 else ["ahead", "fresh"])
        for arm in arms:
            spares = Spares(resolve_device(device), find_sandbox(), depth=1) if arm == "ahead" else None
            try:
                if spares is not None:
                    spares.prepare()  # started now; the evaluation's load waits for it
                yield row(problem_id, kbench.evaluate(problem_id, candidate, device, policy="lenient",
                                                      spares=spares), arm)
            finally:
                if spares is not None:
                    spares.close()


def report(rows: list[dict]) -> None:
    modes = sorted({r.get("mode", "fresh") for r in rows})
    for mode in modes if len(modes) > 1 else []:
        print(f"{mode}:")
        report([r for r in rows if r.get("mode", "fresh") == mode])
    judged = [r for r in rows if r["status"] == "correct" and r["interval"] and r["within"]]
    print(f"{len(judged)} null evaluations ({len(rows) - len(judged)} not judged correct) "
          f"of {len({r['problem'] for r in judged})} problems on {judged[0]['device_name'] if judged else '-'}")
    for name in ("interval", "within"):
        held = sum(r[name][0] <= 1.0 <= r[name][1] for r in judged)
        width = statistics.median((r[name][1] - r[name][0]) / r["speedup"] for r in judged) if judged else 0.0
        print(f"  {name:<9} holds 1.0 in {held} of {len(judged)} ({held / max(len(judged), 1):.0%}); "
              f"median width {width:.2%} of the speedup")
    timed = [r for r in rows if r.get("wall_seconds")]
    if timed:  # what an evaluation costs (issue 16's figures), from the same runs
        walls = sorted(r["wall_seconds"] for r in timed)
        phases = sorted({p for r in timed for p in r["phase_seconds"]})
        medians = {p: statistics.median(r["phase_seconds"].get(p, 0.0) for r in timed) for p in phases}
        print(f"  wall per evaluation: median {statistics.median(walls):.1f} s ({walls[0]:.1f}-{walls[-1]:.1f} s); "
              "median per phase: " + ", ".join(f"{p} {t:.2f} s" for p, t in medians.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--problems", nargs="*", default=DEFAULT_PROBLEMS)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--mode", choices=["fresh", "batch", "ab"], default="fresh",
                        help="fresh: one at a time; batch: evaluate_many with workers ahead; ab: both, in turn")
    parser.add_argument("--report", action="store_true", help="Only print the report of --out.")
    args = parser.parse_args()
    if not args.report:
        started = time.monotonic()
        with tempfile.TemporaryDirectory() as tmp:
            for done in judge_all(args.problems, args.repeats, args.device, args.mode, Path(tmp)):
                print(json.dumps(done), flush=True)
                with open(args.out, "a") as out:
                    out.write(json.dumps(done) + "\n")
        print(f"{len(args.problems) * args.repeats} evaluations in {time.monotonic() - started:.1f} s of wall time")
    report([json.loads(line) for line in args.out.read_text().splitlines() if line.strip()])


if __name__ == "__main__":
    main()
