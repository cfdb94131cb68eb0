"""Wall time of `kbench eval` with a cold and a warm build cache.

For each (problem, solution) pair, runs the CLI twice with KBENCH_CACHE
pointing at a new empty folder (the first run builds the extension or
compiles the Triton kernel; the second reuses the cache). Run on a GPU machine:

    PYTHONPATH=src python3 benchmarks/eval_walltime.py [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PAIRS = [
    ("level1/relu", "src/kbench/suite/examples/relu.py", "Triton"),
    ("level1/swish", "src/kbench/suite/examples/swish.py", "CUDA (load_inline)"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--size", default="auto")
    args = parser.parse_args()
    rows = []
    for problem, solution, kind in PAIRS:
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "KBENCH_CACHE": cache}
            for state in ("cold", "warm"):
                started = time.monotonic()
                done = subprocess.run(
                    [sys.executable, "-m", "kbench", "eval", solution, "--problem", problem, "--json", "--size", args.size],
                    env=env, capture_output=True, text=True,
                )
                wall = time.monotonic() - started
                verdict = json.loads(done.stdout) if done.returncode == 0 else {"status": "error", "stderr": done.stderr[-2000:]}
                rows.append({"problem": problem, "kind": kind, "cache": state, "wall_seconds": wall,
                             "status": verdict.get("status"), "phase_seconds": verdict.get("phase_seconds"),
                             "speedup": verdict.get("speedup"), "runtime_ms": verdict.get("runtime_ms")})
                print(f"{problem:16s} {kind:20s} {state}: {wall:6.1f} s  {verdict.get('status')}  "
                      f"phases {verdict.get('phase_seconds')}  speedup {verdict.get('speedup')}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
