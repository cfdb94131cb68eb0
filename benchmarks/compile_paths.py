"""The same torch.compile'd reference, timed as the `compile` baseline column and as a candidate.

On the H200 (docs/measurements/2026-11-30-compile-columns.md) the two
disagreed: gelu 0.85x eager as the column, 0.97x as a candidate; layer_norm
1.30x and 0.97x. A candidate is checked at the problem's small size before the
default one, so dynamo meets a second shape and (automatic dynamic shapes)
should recompile for any size; a column only ever sees the default size. This
script times, for each problem, in one process after another:

- column: `measure_baselines(..., ["compile"])` (eager interleaved with it);
- candidate: the reference under `torch.compile(forward)`, judged with the
  guard off (eager interleaved with it);
- candidate-static: the same with `dynamic=False`, so the second shape gets a
  static recompile of its own.

If candidate-static agrees with the column and candidate does not, dynamic
shapes explain the gap. Each result is appended to a JSON-lines file as it
comes; ``--report`` prints the table of speedups over eager:

    PYTHONPATH=src python3 benchmarks/compile_paths.py --out paths.jsonl [--problems level1/gelu ...]
    PYTHONPATH=src python3 benchmarks/compile_paths.py --out paths.jsonl --report
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from repeatability import COMPILED

import kbench
from kbench.judge import measure_baselines
from kbench.judge.protocol.timing import TimingSettings

PROBLEMS = ["level1/gelu", "level1/layer_norm", "level1/relu", "level1/matmul_square", "level1/softmax"]
STATIC = COMPILED.replace("torch.compile(super().forward)", "torch.compile(super().forward, dynamic=False)")
PATHS = ("column", "candidate", "candidate-static")


def measure(problem_id: str, path: str, device: str | None, size: str, scratch: Path) -> dict:
    started = time.monotonic()
    row = {"problem": problem_id, "path": path, "size": size}
    if path == "column":
        measured = measure_baselines(problem_id, device, ["compile"], size=size, timing=TimingSettings())
        row.update(runtime_ms=measured["compile"]["runtime_ms"], eager_ms=measured["eager"]["runtime_ms"])
    else:
        source = kbench.find_problem(problem_id).source + (STATIC if path == "candidate-static" else COMPILED)
        candidate = scratch / f"{problem_id.replace('/', '_')}_{path}.py"
        candidate.write_text(source)
        verdict = kbench.evaluate(problem_id, candidate, device, size=size, trials=1, policy="off", baseline_cache=None)
        row.update(status=verdict.status, reason=verdict.reason[:300], device_name=verdict.device_name)
        if verdict.correct:
            row.update(runtime_ms=verdict.runtime_ms, eager_ms=verdict.baselines["eager"]["runtime_ms"])
    if row.get("runtime_ms"):
        row["speedup"] = row["eager_ms"] / row["runtime_ms"]
    return {**row, "seconds": time.monotonic() - started}


def table(rows: list[dict]) -> str:
    """Speedup over eager per problem and path (the last measurement of each)."""
    latest = {(r["problem"], r["path"]): r for r in rows}
    lines = ["| problem | " + " | ".join(PATHS) + " |", "| --- " * (1 + len(PATHS)) + "|"]
    for problem in dict.fromkeys(r["problem"] for r in rows):
        cells = [latest.get((problem, path), {}) for path in PATHS]
        lines.append(f"| `{problem}` | " + " | ".join(
            f"{c['speedup']:.3f}" if "speedup" in c else c.get("status", "-") for c in cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="*", default=PROBLEMS)
    parser.add_argument("--device", default=None)
    parser.add_argument("--size", default="auto", help="auto (small on a CPU), default or small")
    parser.add_argument("--out", required=True, help="JSON-lines file of measurements (appended to)")
    parser.add_argument("--report", action="store_true", help="only print the table of --out")
    args = parser.parse_args()
    out = Path(args.out)
    if not args.report:
        with tempfile.TemporaryDirectory() as scratch, out.open("a") as sink:
            for problem_id in args.problems:
                for path in PATHS:
                    row = measure(problem_id, path, args.device, args.size, Path(scratch))
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()
                    print(problem_id, path, f"{row.get('speedup', float('nan')):.4f}", f"{row['seconds']:.1f}s",
                          flush=True)
    print(table([json.loads(line) for line in out.read_text().splitlines() if line.strip()]))


if __name__ == "__main__":
    main()
