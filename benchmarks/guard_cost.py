"""What the guard adds to the time of one evaluation.

Evaluates the same honest solution with the guard off and with the strict
policy, alternating, and prints the wall time of each evaluation and its
phases. Run on any machine (on a GPU by default when there is one):

    PYTHONPATH=src python3 benchmarks/guard_cost.py [--problem level1/relu] [--solution ...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics

import kbench


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="level1/relu")
    parser.add_argument("--solution", default="src/kbench/suite/examples/relu.py")
    parser.add_argument("--device", default=None)
    parser.add_argument("--size", default="auto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    walls: dict[str, list[float]] = {"off": [], "strict": []}
    rows = []
    for _ in range(args.repeats):
        for policy in ("off", "strict"):
            verdict = kbench.evaluate(args.problem, args.solution, args.device, size=args.size, policy=policy)
            walls[policy].append(verdict.wall_seconds)
            rows.append({"policy": policy, "status": verdict.status, "wall_seconds": verdict.wall_seconds,
                         "phase_seconds": verdict.phase_seconds})
            print(f"{policy:7s} {verdict.status:9s} {verdict.wall_seconds:7.2f} s  "
                  + ", ".join(f"{k} {v:.2f}s" for k, v in verdict.phase_seconds.items()), flush=True)
    off, strict = statistics.median(walls["off"]), statistics.median(walls["strict"])
    print(f"median wall: off {off:.2f} s, strict {strict:.2f} s, guard adds {strict - off:+.2f} s "
          f"({100 * (strict - off) / off:+.1f}%) over {args.repeats} pairs")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
