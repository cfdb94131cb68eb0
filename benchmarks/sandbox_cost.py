"""What the OS sandbox costs: wall time of `kbench eval` with and without it, same problems.

For each bundled example (problem, solution) the build cache is warmed once,
then the evaluation runs ``--reps`` times in each mode, alternating (sandbox,
no sandbox, sandbox, ...) so that drift moves both alike. Prints the median
wall time per mode and the difference; ``--out`` saves every run.

    PYTHONPATH=src python3 benchmarks/sandbox_cost.py [--reps 3] [--out cost.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

PAIRS = [
    ("level1/relu", "src/kbench/suite/examples/relu.py", "Triton"),
    ("level1/softmax", "src/kbench/suite/examples/softmax.py", "Triton"),
    ("level1/swish", "src/kbench/suite/examples/swish.py", "CUDA (load_inline)"),
]
MODES = {"sandbox": [], "no sandbox": ["--no-sandbox"]}


def evaluate(problem: str, solution: str, flags: list[str]) -> dict:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "kbench", "eval", solution, "--problem", problem, "--json", *flags],
                          capture_output=True, text=True)
    wall = time.monotonic() - started
    verdict = json.loads(done.stdout) if done.returncode == 0 else {"status": "error", "reason": done.stderr[-2000:]}
    return {"wall_seconds": wall, "status": verdict.get("status"), "reason": verdict.get("reason", "")[:300],
            "phase_seconds": verdict.get("phase_seconds"), "device_name": verdict.get("device_name"),
            "sandbox": verdict.get("sandbox")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rows = []
    for problem, solution, kind in PAIRS:
        warm = evaluate(problem, solution, [])  # builds into the candidate's cache: every later run is warm
        print(f"{problem}: warm-up {warm['wall_seconds']:.1f} s {warm['status']}", flush=True)
        for rep in range(args.reps):
            for mode, flags in MODES.items():
                row = {"problem": problem, "kind": kind, "mode": mode, "rep": rep, **evaluate(problem, solution, flags)}
                rows.append(row)
                print(f"  {mode:10s} rep {rep}: {row['wall_seconds']:6.2f} s {row['status']} {row['phase_seconds']}",
                      flush=True)
    print(f"\n{'problem':16s} {'kind':20s} {'sandbox s':>10s} {'none s':>8s} {'cost s':>7s}  (median of {args.reps})")
    for problem, _, kind in PAIRS:
        medians = {mode: statistics.median(r["wall_seconds"] for r in rows if r["problem"] == problem and r["mode"] == mode)
                   for mode in MODES}
        print(f"{problem:16s} {kind:20s} {medians['sandbox']:10.2f} {medians['no sandbox']:8.2f} "
              f"{medians['sandbox'] - medians['no sandbox']:+7.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
