"""How a batch of evaluations scales over the local GPUs (issues 16 and 19).

Each problem's own ``Model`` is submitted as its candidate (``--policy lenient``:
its speedup is 1, and it needs no build), and the batch is judged by
``kbench.evaluate_many`` with the local executor on the GPUs given, one timed
evaluation per GPU at a time. Reported per GPU count: the batch's wall time,
its speed-up over the first count given, and each GPU's busy share, the time
its evaluations took over the batch's wall time (``busy``), and the part of it
spent running or checking calls and timing (other size, trials, the guard's
recorded call, timing and baseline phases: ``measuring``), the rest being
workers starting and loading, and the judge's own work between calls.

    PYTHONPATH=src python3 benchmarks/gpu_scaling.py --gpus 0 0,1 --levels 1 2 --out scaling.json
    PYTHONPATH=src python3 benchmarks/gpu_scaling.py --gpus 0 --limit 20 --out smoke.json   # a quick look

Each evaluation's workers start during the one before (kbench.judge.processes.spares,
the default on GPUs; ``--no-ahead`` for one at a time). Every verdict is kept
in the JSON with its device and phases; the file is rewritten after each GPU
count.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Callable

import kbench
from kbench.judge import LocalExecutor
from kbench.judge.processes import spares
from kbench.suite import suite_problems

MEASURING_PHASES = ("other_size", "trials", "record", "timing", "baseline")


def null_pairs(levels: list[int], limit: int | None, directory: Path) -> list[tuple[str, Path]]:
    pairs = []
    for problem in (p for level in levels for p in suite_problems(level)):
        candidate = directory / f"{problem.id.replace('/', '_')}_null.py"
        candidate.write_text(problem.source + "\n\nModelNew = Model\n")
        pairs.append((problem.id, candidate))
    return pairs[:limit]


def run_batch(pairs: list[tuple[str, Path]], devices: list[str], ahead: bool | None,
              progress: Callable[[dict], None]) -> dict:
    """Judge the batch; ``progress`` gets the figures so far after every verdict
    (a run cut short by a time limit still leaves them)."""
    started = time.monotonic()
    rows: list[dict] = []
    executor = LocalExecutor(devices, ahead=ahead)
    result = {"devices": devices, "ahead": executor.ahead, "pairs_ahead": spares.PAIRS_AHEAD, "rows": rows}
    for index, verdict in kbench.evaluate_many(pairs, executor=executor, policy="lenient", baselines=("eager",)):
        rows.append({"problem": pairs[index][0], "device": verdict.device, "status": verdict.status,
                     "wall_seconds": verdict.wall_seconds, "phase_seconds": verdict.phase_seconds,
                     "speedup": verdict.speedup.get("eager")})
        print(f"  [{len(rows)}/{len(pairs)}] {verdict.device} {pairs[index][0]}: {verdict.status} "
              f"in {verdict.wall_seconds:.1f} s", flush=True)
        wall = time.monotonic() - started
        result.update(wall_seconds=wall, complete=len(rows) == len(pairs), per_gpu={
            device: shares([r for r in rows if r["device"] == device], wall) for device in devices})
        progress(result)
    return result


def shares(rows: list[dict], wall: float) -> dict:
    return {"evaluations": len(rows), "busy": sum(r["wall_seconds"] for r in rows) / wall,
            "measuring": sum(r["phase_seconds"].get(p, 0.0) for r in rows for p in MEASURING_PHASES) / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", nargs="+", default=["0"], help="GPU sets to compare, each like 0 or 0,1,2,3 (cpu: a smoke run)")
    parser.add_argument("--levels", nargs="+", type=int, default=[1])
    parser.add_argument("--limit", type=int, help="Only the first N problems.")
    parser.add_argument("--ahead", action=argparse.BooleanOptionalAction, default=None,
                        help="Workers started ahead (kbench.judge.processes.spares; default: on GPUs).")
    parser.add_argument("--pairs-ahead", type=int, default=spares.PAIRS_AHEAD,
                        help="Worker pairs kept starting ahead per GPU.")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    spares.PAIRS_AHEAD = args.pairs_ahead
    results: list[dict] = []

    def save(run: dict) -> None:
        args.out.write_text(json.dumps({"levels": args.levels, "runs": [*results, run]}, indent=1))

    with tempfile.TemporaryDirectory() as tmp:
        pairs = null_pairs(args.levels, args.limit, Path(tmp))
        for gpus in args.gpus:
            devices = ["cpu"] if gpus == "cpu" else [f"cuda:{i}" for i in gpus.split(",")]
            print(f"{len(pairs)} evaluations on {', '.join(devices)}", flush=True)
            results.append(run_batch(pairs, devices, args.ahead, save))
    first = results[0]["wall_seconds"]
    print("\n| GPUs | wall | speed-up | busy per GPU | measuring per GPU |\n| --- | --- | --- | --- | --- |")
    for run in results:
        busy = ", ".join(f"{g['busy']:.0%}" for g in run["per_gpu"].values())
        measuring = ", ".join(f"{g['measuring']:.0%}" for g in run["per_gpu"].values())
        print(f"| {len(run['devices'])} | {run['wall_seconds']:.0f} s | {first / run['wall_seconds']:.2f} x "
              f"| {busy} | {measuring} |")


if __name__ == "__main__":
    main()
