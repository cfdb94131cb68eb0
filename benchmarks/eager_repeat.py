"""How well the eager baseline repeats between processes.

Each problem's eager Model is timed twice, each time in a fresh process, by the
judge's protocol (kbench.judge.time_reference); the table gives both medians
and their relative difference. Run on a GPU machine:

    PYTHONPATH=src python3 benchmarks/eager_repeat.py [--out results.json] [PROBLEM ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from kbench.judge import time_reference

DEFAULT_PROBLEMS = [
    "level1/relu",
    "level1/softmax",
    "level1/swish",
    "level1/matmul_square",
    "level1/matmul_large_k",
    "level1/conv2d",
    "level1/conv_transpose3d",
    "level1/layer_norm",
    "level1/maxpool2d",
    "level1/sum_dim",
    "level1/cross_entropy",
    "level1/embedding",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", default=DEFAULT_PROBLEMS)
    parser.add_argument("--device", default=None)
    parser.add_argument("--size", default="auto")
    parser.add_argument("--out", default=None, help="write the rows as JSON here")
    args = parser.parse_args()

    rows = []
    for problem in args.problems:
        started = time.monotonic()
        first = time_reference(problem, args.device, size=args.size)
        second = time_reference(problem, args.device, size=args.size)
        a, b = first["median_ms"], second["median_ms"]
        rows.append(
            {
                "problem": problem,
                "first_ms": a,
                "second_ms": b,
                "rel_diff": abs(a - b) / min(a, b),
                "first": first,
                "second": second,
                "wall_seconds": time.monotonic() - started,
            }
        )
        print(f"{problem:32s} {a:10.4f} ms {b:10.4f} ms  {100 * rows[-1]['rel_diff']:6.2f}%  "
              f"(n={first['count']}/{second['count']}, {rows[-1]['wall_seconds']:.0f}s)", flush=True)
    diffs = sorted(r["rel_diff"] for r in rows)
    print(f"median relative difference {100 * statistics.median(diffs):.2f}%, "
          f"max {100 * diffs[-1]:.2f}% over {len(rows)} problems")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
