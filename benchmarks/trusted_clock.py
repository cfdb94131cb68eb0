"""The judge's clock against the workers' clocks: honest solutions, and the
exploits the trusted-clock rule answers.

Evaluates each (problem, solution) pair under ``--policy off`` (so every rule's
measurements are recorded and nothing ends early), once per size and repeat,
and prints how much longer the judge saw each timed call than the worker's
clock said (median ms per call, for the candidate and for eager on the same
inputs), the difference, and the limit the trusted-clock rule would allow.
Honest rows set the rule's constants (kbench.judge.calls.TRUSTED_*): their
difference must stay under the limit; exploit rows show the margin by which
work done outside the timed window is seen. Run on a GPU machine:

    PYTHONPATH=src python3 benchmarks/trusted_clock.py [--device cuda] [--sizes default,small] [--repeat 2] [--out r.json]
"""

from __future__ import annotations

import argparse
import json

import kbench
from kbench.judge.calls import trusted_clock_limit

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
    cand, eager = timing.get("candidate_excess_ms"), timing.get("eager_excess_ms")
    row = {
        "problem": problem, "solution": solution, "size": size, "repeat": repeat, "honest": honest,
        "status": verdict.status, "reason": verdict.reason[:300], "runtime_ms": verdict.runtime_ms,
        "judge_median_ms": timing.get("judge_median_ms"), "candidate_excess_ms": cand, "eager_excess_ms": eager,
        "phase_seconds": verdict.phase_seconds, "wall_seconds": verdict.wall_seconds,
    }
    if cand is not None and eager is not None:
        row["difference_ms"] = cand - eager
        row["limit_ms"] = trusted_clock_limit(eager, timing["median_ms"], device)
        row["caught"] = cand > row["limit_ms"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--sizes", default="default,small")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    print(f"{'problem':20s} {'solution':24s} {'size':8s} {'ms':>8s} {'cand ex':>8s} {'eager ex':>8s} "
          f"{'diff':>8s} {'limit':>8s} caught  wall s")
    for size in args.sizes.split(","):
        for pairs, honest in ((HONEST, True), (EXPLOITS, False)):
            for problem, solution in pairs:
                for repeat in range(args.repeat):
                    row = measure(problem, solution, args.device, size, repeat, honest)
                    rows.append(row)
                    name = solution.rsplit("/", 1)[-1].removesuffix(".py")
                    if "limit_ms" not in row:
                        print(f"{problem:20s} {name:24s} {size:8s} {row['status']}: {row['reason'][:200]}", flush=True)
                        continue
                    print(f"{problem:20s} {name:24s} {size:8s} {row['runtime_ms']:8.4f} "
                          f"{row['candidate_excess_ms']:8.4f} {row['eager_excess_ms']:8.4f} {row['difference_ms']:8.4f} "
                          f"{row['limit_ms']:8.4f} {str(row['caught']):6s} {row['wall_seconds']:6.1f}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
