"""Each bundled repository task's expert speedup on a GPU: base against expert at the default size.

For every task: a checkout of the pinned commit (base) and one with the expert patch applied, each
running the workload in its own worker process (benchmarks/repo_workload_worker.py) on the same GPU,
built and fed alike (same init seed, same input seed). After a warm-up, the two are timed in
alternating rounds (ABBA order), each call alone: the worker synchronises, records a CUDA event, calls
the model, records another and waits, so launch gaps and host synchronisations count. The table gives
the median of each side, the spread (interquartile range as a share of the median), and the speedup
(median over median) with the lowest and highest of the rounds' ratios; then the outputs of the two
sides are compared on two input seeds with the judge's comparison (kbench.judge.trusted.compare) and the
workload's tolerance, and checked to differ between the seeds.

    PYTHONPATH=src python3 benchmarks/repo_experts.py [--out results.json] [TASK_ID ...]

Without --out the JSON goes to $OUT/repo_experts.json when $OUT is set. Self-contained: plain git and
the workload worker, whether or not kbench.repo has landed. The L2 cache is not flushed between
calls (every default workload moves far more than the L2 holds).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import repo_tasks_common as common

INIT_SEED = 1234
SEEDS = (1, 2)


class Worker:
    """A workload worker in --serve mode: one JSON command a line in, one JSON answer a line out."""

    def __init__(self, repo: Path, task: common.SuiteTask, size: str, device: str, log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            common.worker_command(repo, task, size, device, "--serve", "--seed", str(SEEDS[0]),
                                  "--init-seed", str(INIT_SEED)),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("w"), text=True,
            env=common.worker_env(device),
        )

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            raise RuntimeError(f"worker exited ({self.proc.returncode}): {self.log.read_text()[-3000:]}")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(f"worker: {reply}")
        return reply

    def ask(self, **msg) -> dict:
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return self.answer()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


def measure(task: common.SuiteTask, device: str, size: str, budget_s: float, rounds: int) -> dict:
    row: dict = {"task": task.id, "kind": task.kind, "title": task.title}
    with common.Scratch() as tmp:
        base = common.checkout(task, tmp / "base")
        expert = common.checkout(task, tmp / "expert")
        row["expert_paths"] = common.apply_patch(task, task.expert, expert)
        workers = {"base": Worker(base, task, size, device, tmp / "base.log"),
                   "expert": Worker(expert, task, size, device, tmp / "expert.log")}
        try:
            for name, worker in workers.items():
                ready = worker.answer()
                row["device_name"] = ready["device_name"]
                row[f"{name}_imported"] = ready["imported"]
            warm = {name: worker.ask(cmd="time", n=3)["ms"] for name, worker in workers.items()}
            estimate = {name: max(min(ms[1:]), 1e-3) for name, ms in warm.items()}
            reps = {name: max(3, min(50, int(budget_s / rounds / (est / 1000)))) for name, est in estimate.items()}
            times: dict[str, list[float]] = {"base": [], "expert": []}
            ratios = []
            for r in range(rounds):
                order = ("base", "expert") if r % 2 == 0 else ("expert", "base")
                medians = {}
                for name in order:
                    ms = workers[name].ask(cmd="time", n=reps[name])["ms"]
                    times[name] += ms
                    medians[name] = statistics.median(ms)
                ratios.append(medians["base"] / medians["expert"])
            for name in ("base", "expert"):
                ms = sorted(times[name])
                q1, q3 = ms[len(ms) // 4], ms[(3 * len(ms)) // 4]
                row[f"{name}_ms"] = statistics.median(ms)
                row[f"{name}_iqr_pct"] = 100 * (q3 - q1) / statistics.median(ms)
                row[f"{name}_calls"] = len(ms)
            row["speedup"] = row["base_ms"] / row["expert_ms"]
            row["speedup_rounds"] = [min(ratios), max(ratios)]
            row["outputs"] = compare_outputs(task, workers, tmp)
        finally:
            for worker in workers.values():
                worker.close()
    return row


def compare_outputs(task: common.SuiteTask, workers: dict[str, Worker], tmp: Path) -> dict:
    import torch

    from repo_tasks_check import compare, workload_tolerance

    saved: dict[tuple[str, int], object] = {}
    for seed in SEEDS:
        for name, worker in workers.items():
            path = tmp / f"{name}-{seed}.pt"
            worker.ask(cmd="inputs", seed=seed)
            worker.ask(cmd="save", path=str(path))
            saved[(name, seed)] = torch.load(path, weights_only=False)
            path.unlink()
    tolerance = workload_tolerance(task)
    result = {}
    for seed in SEEDS:
        ok, why = compare(saved[("base", seed)], saved[("expert", seed)], tolerance)
        result[f"seed {seed}"] = {"agree": ok, "detail": why}
    same, _ = compare(saved[("base", SEEDS[0])], saved[("base", SEEDS[1])], {})
    result["seeds differ"] = not same
    result["ok"] = all(v["agree"] for k, v in result.items() if k.startswith("seed ")) and not same
    return result


def versions() -> dict:
    import torch

    found = {"python": platform.python_version(), "torch": torch.__version__,
             "cuda": torch.version.cuda, "host": platform.node()}
    try:
        import triton

        found["triton"] = triton.__version__
    except ImportError:
        found["triton"] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="task ids (default: all)")
    parser.add_argument("--out", help="write the results as JSON here (default: $OUT/repo_experts.json)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", default="default", choices=("default", "small"))
    parser.add_argument("--budget-s", type=float, default=2.0, help="seconds of timed calls per side and task")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()

    started = time.monotonic()
    rows = []
    print(f"{'task':30s} {'kind':18s} {'base ms':>9s} {'expert ms':>10s} {'iqr%':>9s} {'speedup':>8s} "
          f"{'rounds':>13s}  outputs")
    for task in common.suite(args.tasks):
        begun = time.monotonic()
        try:
            row = measure(task, args.device, args.size, args.budget_s, args.rounds)
        except Exception as exc:  # one task's failure is reported and the others still run
            row = {"task": task.id, "error": f"{type(exc).__name__}: {exc}"}
        row["seconds"] = round(time.monotonic() - begun, 1)
        rows.append(row)
        if "error" in row:
            print(f"{task.id:30s} ERROR {row['error'][:2000]}")
        else:
            lo, hi = row["speedup_rounds"]
            flags = [] if row["outputs"]["ok"] else ["OUTPUTS DIFFER"]
            flags += [] if row["speedup"] >= 1.2 else ["below 1.2x"]
            flags += [] if row["base_ms"] >= 1.0 else ["base under 1 ms"]
            print(f"{task.id:30s} {row['kind']:18s} {row['base_ms']:9.3f} {row['expert_ms']:10.3f} "
                  f"{row['base_iqr_pct']:4.1f}/{row['expert_iqr_pct']:<4.1f} {row['speedup']:7.2f}x "
                  f"[{lo:5.2f}, {hi:5.2f}]  {'ok' if row['outputs']['ok'] else 'DIFFER'}"
                  f"{'  ' + ', '.join(flags) if flags else ''}  ({row['seconds']} s)")
        sys.stdout.flush()
    report = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
        "size": args.size,
        "budget_s": args.budget_s,
        "rounds": args.rounds,
        "wall_seconds": round(time.monotonic() - started, 1),
        "rows": rows,
    }
    out = args.out or (os.path.join(os.environ["OUT"], "repo_experts.json") if os.environ.get("OUT") else None)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(report, indent=2))
        print(f"wrote {out}")
    ok = [r for r in rows if "error" not in r and r["outputs"]["ok"] and r["speedup"] >= 1.2]
    print(f"{len(ok)} of {len(rows)} tasks: outputs agree and expert >= 1.2x ({report['wall_seconds']} s)")


if __name__ == "__main__":
    main()
