"""The judge's clock against the workers' clocks: honest solutions, and the
exploits the trusted-clock rule answers.

Evaluates each (problem, solution) pair under ``--policy off`` (so every rule's
measurements are recorded and nothing ends early), once per size and repeat,
and prints how much longer the judge saw each timed call than the worker's
clock said (the draw asked for -> the output read, beyond the reported time) and its
steps (draw, go -> done, read; median ms per call, for the candidate and for eager
on the same inputs), and the limits the trusted-clock rule allows.
Honest rows set the rule's constants (kbench.judge.trusted.calls.TRUSTED_*): their
difference must stay under the limit; exploit rows show the margin by which
work done outside the timed window is seen. Run on a GPU machine:

    PYTHONPATH=src python3 benchmarks/trusted_clock.py [--device cuda] [--sizes default,small] [--repeat 2] [--out r.json]
"""

from __future__ import annotations

import argparse
import json

import kbench
from kbench.judge.trusted.calls import trusted_clock_limit

SPANS = ("excess_ms", "draw_ms", "go_ms", "read_ms")  # CallDriver's steps of a call's span
HONEST = [
    ("level1/relu", "src/kbench/suite/examples/relu.py"),
    ("level1/softmax", "src/kbench/suite/examples/softmax.py"),
    ("level1/swish", "src/kbench/suite/examples/swish.py"),
    ("level1/sum_dim", "tests/exploits/twin_sum_dim.py"),
    ("tests/fixtures/problems/linear_tanh.py", "tests/exploits/twin_linear_tanh.py"),
]
EXPLOITS = [
    ("level1/relu", "tests/exploits/forged_clock_class.py"),
    ("level1/relu", "tests/exploits/profile_hook_inputs.py"),
]


def measure(problem: str, solution: str, device: str, size: str, repeat: int, honest: bool) -> dict:
    verdict = kbench.evaluate(problem, solution, device, size=size, policy="off", trials=2)
    timing = verdict.timing or {}
    row = {
        "problem": problem, "solution": solution, "size": size, "repeat": repeat, "honest": honest,
        "status": verdict.status, "reason": verdict.reason[:300], "runtime_ms": verdict.runtime_ms,
        "judge_median_ms": timing.get("judge_median_ms"), "phase_seconds": verdict.phase_seconds,
        "wall_seconds": verdict.wall_seconds,
    }
    for span in SPANS:
        cand, eager = timing.get(f"candidate_{span}"), timing.get(f"eager_{span}")
        if cand is None or eager is None:
            return row
        limit = trusted_clock_limit(eager, timing["median_ms"], device)
        row[span] = {"candidate": cand, "eager": eager, "difference": cand - eager, "limit": limit,
                     "caught": span == "excess_ms" and cand > limit}  # the rule bounds the whole excess; steps show where
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--sizes", default="default,small")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated solution names to run (default: all)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    print(f"{'problem':20s} {'solution':20s} {'size':8s} {'ms':>8s}   (candidate, eager, limit ms) for "
          f"{' and '.join(SPANS)}   caught   wall s")
    for size in args.sizes.split(","):
        for pairs, honest in ((HONEST, True), (EXPLOITS, False)):
            for problem, solution in pairs:
                if args.only and not any(f"/{name}.py" in solution for name in args.only.split(",")):
                    continue
                for repeat in range(args.repeat):
                    row = measure(problem, solution, args.device, size, repeat, honest)
                    rows.append(row)
                    name = solution.rsplit("/", 1)[-1].removesuffix(".py")
                    problem_name = problem.rsplit("/", 1)[-1].removesuffix(".py")
                    if not all(span in row for span in SPANS):
                        print(f"{problem_name:20s} {name:20s} {size:8s} {row['status']}: {row['reason'][:200]}")
                        continue
                    spans = "   ".join(f"{row[s]['candidate']:7.3f} {row[s]['eager']:7.3f} {row[s]['limit']:7.3f}"
                                       for s in SPANS)
                    caught = any(row[s]["caught"] for s in SPANS)
                    print(f"{problem_name:20s} {name:20s} {size:8s} {row['runtime_ms']:8.4f}   {spans}   "
                          f"{str(caught):6s} {row['wall_seconds']:6.1f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
