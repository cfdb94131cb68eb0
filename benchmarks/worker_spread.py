"""How much the same code's time differs from one worker process to the next, against how much it moves
from round to round within one worker: the question behind a repository patch's fraction of the expert.

On the H200 (2026-12-02, docs/measurements/2026-12-02-repo-replays.md) tinylm/fused-rmsnorm's expert took 0.617-0.648
ms a round in one
worker and 0.619-0.687 ms in the worker beside it, rounds with a new placement each. A spread between
workers that rounds within one worker do not sample is in every fraction and in no interval. This times
each task's expert patch as the candidate (sandboxed, as a patch is) and in WORKERS-1 trusted workers
beside it, all on the same inputs in the same interleaved rounds with the base (with --problems, a kernel
problem's null candidate in as many workers, issue 30's worker pairs), and reports per worker
its rounds, and per task the standard deviation of log time between workers and within them. With
--repeat 2 each task is measured twice, minutes apart, in new workers: whether the whole evaluation moves
(the expert took 0.62-0.65 ms in one evaluation and 0.68-0.71 ms in the next on 2026-12-02):

    PYTHONPATH=src python3 benchmarks/worker_spread.py --out spread.json [--tasks ID ...]
        [--problems level1/relu ...] [--workers 4] [--rounds 8] [--repeat 1] [--no-placed] [--device cuda]
        [--max-calls 60] [--target-rel-error 0.005]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from kbench.core.solution import Solution
from kbench.judge.processes.devices import resolve_device, scratch_root
from kbench.judge.evaluation import evaluate
from kbench.judge.processes.sides import Sides
from kbench.judge.protocol.timing import TimingSettings
from kbench.repo import find_task, suite_tasks
from kbench.repo.checkout import checkout, copy_tree
from kbench.repo.patch import Patch, apply
from kbench.suite import find_problem
from kbench.suite.problem import resolve_size


def spread(task_id: str, device: str, workers: int, timing: TimingSettings) -> dict:
    """A repository task: its expert as the patch, and in the workers beside; the base as the reference."""
    task = find_task(task_id)
    patch = Patch.from_file(task.expert_patch)
    problem = task.workload()
    with tempfile.TemporaryDirectory(prefix="kbench-spread-", dir=scratch_root()) as tmp:
        base = checkout(task.repository, Path(tmp) / "base")
        expert = copy_tree(base, Path(tmp) / "expert")
        apply(patch, expert)
        return measured(task_id, problem, Solution(problem.source, task.workload_path), device, timing,
                        Sides(reference=base, candidate=expert, candidate_key=patch.sha256,
                              columns={f"beside{i}": expert for i in range(1, workers)}))


def problem_spread(problem_id: str, device: str, workers: int, timing: TimingSettings) -> dict:
    """A kernel problem's null candidate (its own Model, issue 30): in the candidate's worker and in the
    workers beside, each the problem's Model with nothing else on its import path; eager as the reference."""
    problem = find_problem(problem_id)
    with tempfile.TemporaryDirectory(prefix="kbench-spread-", dir=scratch_root()) as tmp:
        nothing = Path(tmp) / "nothing"
        nothing.mkdir()
        return measured(problem_id, problem, Solution(problem.source, problem.path), device, timing,
                        Sides(reference=nothing, candidate=nothing, candidate_key=problem_id,
                              columns={f"beside{i}": nothing for i in range(1, workers)}))


def measured(name: str, problem, solution: Solution, device: str, timing: TimingSettings, sides: Sides) -> dict:
    started = time.monotonic()
    verdict = evaluate(problem, solution, device, size=resolve_size("auto", device), trials=2, timing=timing,
                       baselines=("eager",), baseline_cache=None, timeout=900.0, sides=sides)
    record = {"name": name, "status": verdict.status, "reason": verdict.reason.splitlines()[0][:300],
              "seconds": round(time.monotonic() - started, 1), "settings": asdict(timing)}
    if not verdict.correct:
        return record
    columns = list(sides.columns)
    per_worker = {"candidate": verdict.timing["rounds"],
                  **{c: verdict.baselines[c]["timing"]["rounds"] for c in columns}}
    logs = {w: [math.log(ms) for ms in values] for w, values in per_worker.items()}
    within = statistics.fmean(statistics.stdev(v) for v in logs.values())
    between = statistics.stdev(statistics.fmean(v) for v in logs.values())
    record.update(
        reference_rounds_ms=verdict.baselines["eager"]["timing"]["rounds"], rounds_ms=per_worker,
        fraction={c: verdict.speedup[c] for c in columns},
        fraction_interval={c: verdict.speedup_interval[c] for c in columns},
        within_worker_sd=within, between_worker_sd=between,
        # What the between-worker spread would be if it were the rounds' noise alone, averaged over the rounds.
        expected_between_sd=within / math.sqrt(len(next(iter(logs.values())))),
        # The reference's worker against the workers running the same code: on the H200 (2026-12-02) eager
        # was 0.5-0.9% faster than all four workers in one evaluation of level1/relu and level in the next.
        reference_offset=statistics.median(math.log(ms) for ms in verdict.baselines["eager"]["timing"]["rounds"])
        - statistics.fmean(statistics.median(v) for v in logs.values()),
        # The candidate's (sandboxed) worker against the trusted workers beside it running the same code: on
        # the H200 (2026-12-02) tinylm/prefill-last-logits' expert was 3.4% slower as the patch than beside it.
        candidate_offset=statistics.median(logs["candidate"])
        - statistics.fmean(statistics.median(logs[c]) for c in columns),
    )
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks", nargs="*", help="task ids (default: the whole suite, unless --problems)")
    parser.add_argument("--problems", nargs="*", default=[], help="kernel problems' null candidates instead")
    parser.add_argument("--workers", type=int, default=4, help="workers running the expert, the patch's among them")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1, help="evaluations of each task, one after the other")
    parser.add_argument("--no-placed", dest="placed", action="store_false", help="no new placement per round")
    parser.add_argument("--max-calls", type=int, default=60, help="a round's calls, at most")
    parser.add_argument("--target-rel-error", type=float, default=0.005,
                        help="a round ends early once its median is this precise (0: a round takes its whole second)")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    device = resolve_device(args.device)
    records = []
    tasks = args.tasks or ([] if args.problems else [t.id for t in suite_tasks()])
    # About a second of each worker's calls a round: a round's length (a count of calls, or its whole second
    # with --target-rel-error 0) is what these options let a run compare.
    timing = TimingSettings(max_calls=args.max_calls, target_rel_error=args.target_rel_error, rounds=args.rounds,
                            budget_seconds=float(args.rounds), new_placement_per_round=args.placed)
    planned = [(spread, t) for t in tasks] + [(problem_spread, p) for p in args.problems]
    for measure, name in [each for each in planned for _ in range(args.repeat)]:
        records.append(measure(name, device, args.workers, timing))
        r = records[-1]
        if "between_worker_sd" in r:
            medians = {w: round(statistics.median(v), 4) for w, v in r["rounds_ms"].items()}
            print(f"{name:28} sd of log time between workers {r['between_worker_sd']:.2%} "
                  f"(rounds' noise alone: {r['expected_between_sd']:.2%}), "
                  f"within a worker {r['within_worker_sd']:.2%}, "
                  f"eager's time {r['reference_offset']:+.2%} against theirs, the candidate's "
                  f"{r['candidate_offset']:+.2%} against the workers beside; "
                  f"median ms by worker {medians}; {r['seconds']} s", flush=True)
        else:
            print(f"{name:28} {r['status']}: {r['reason']}", flush=True)
        args.out.write_text(json.dumps(records, indent=1))
    for name in dict.fromkeys(r["name"] for r in records):
        moved = between_evaluations([r for r in records if r["name"] == name and "rounds_ms" in r])
        if moved:
            print(f"{name:28} between evaluations, the candidate's time moved {moved['reference']:.2%} against "
                  f"the reference's worker and {moved['beside']:.2%} against the worker beside it (largest "
                  f"less smallest log ratio of medians, {moved['evaluations']} evaluations)", flush=True)


def between_evaluations(measured: list[dict]) -> dict | None:
    """How far one evaluation's ratio of the candidate's time to the reference's moved from the next, beside
    how far its ratio to the first worker beside moved: whether timing the reference in a worker made as the
    candidate's would steady a score (issue 30)."""
    if len(measured) < 2:
        return None

    def log_ratios(worker: str) -> list[float]:
        return [math.log(statistics.median(r["rounds_ms"]["candidate"])
                         / statistics.median(r["reference_rounds_ms"] if worker == "reference"
                                             else r["rounds_ms"][worker])) for r in measured]

    return {"evaluations": len(measured),
            **{key: max(logs) - min(logs) for key, logs in (("reference", log_ratios("reference")),
                                                            ("beside", log_ratios("beside1")))}}


if __name__ == "__main__":
    main()
