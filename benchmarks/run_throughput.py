"""How busy a run keeps its device: judges a directory of solutions through the run path
(``kbench.runs.runner.execute``, as ``kbench run --solutions DIR --build-jobs N``) and says
when the first verdict came, how long the whole took, and for what fraction of the wall
time after the first verdict a device thread was evaluating.

The solutions: ``--cuda N`` copies of solutions that compile an extension ahead (on a GPU
the CUDA ``load_inline`` files of the honest corpus and the bundled swish example, in turn;
on the CPU the swish example, whose C++ ``load_inline`` build is the CPU's cold build) and
``--triton M`` copies of Triton solutions (the honest corpus's, in turn), interleaved in the
run's order, each copy's source made unique (a comment with this run's tag), so every build
is cold while the baseline cache may stay warm. Instrumented: the evaluations (the run
path's ``evaluate``, in the device threads: start and end), the builds ahead
(``judge.build``: start and end) and each verdict's arrival in the caller's thread.

    PYTHONPATH=src python3 benchmarks/run_throughput.py --cuda 40 --triton 0 --build-jobs 14 --out tp.json
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/run_throughput.py --device cpu --cuda 2 --triton 2 \\
        --build-jobs 2 --out tp_cpu.json

``--schedule previous`` judges with the scheduling before issue 30 (every build submitted
at once to ``--build-jobs`` threads, the device taking the solutions in the run's order),
for a before and after on the same machine; ``--schedule ramp`` spreads the first builds'
starts ``--ramp-seconds`` apart (``RampExecutor``), an experiment for an earlier first verdict;
``--alone`` first times one cold build of another copy alone, the lease's own yardstick for
"the first verdict within about one cold build". The JSON holds the settings, the machine, a
row per solution (kind, build and evaluation intervals, verdict time, status) and the
summary; it is written after every verdict (``complete`` false) and at the end, so a run
cut off by a time limit keeps what it had.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import platform
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch

import kbench
from kbench import judge
from kbench.judge.builds import ahead as builds
from kbench.judge.builds.ahead import available_cpus, build_slots, needs_build
from kbench.judge import executor as executor_module
from kbench.judge.processes.devices import resolve_device
from kbench.judge.executor import LocalExecutor, next_result
from kbench.runs import runner
from kbench.runs.store import Store
from kbench.suite import find_problem
from kbench.suite.problem import ProblemSkipped, check_runnable, resolve_size

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from honest.corpus import CORPUS  # noqa: E402

SWISH = ROOT / "src" / "kbench" / "suite" / "examples" / "swish.py"


# ---------------------------------------------------------------- the solutions

def sources(device: str) -> tuple[list[tuple[str, Path]], list[tuple[str, Path]]]:
    """(problem id, file) of the solutions that build ahead and of the Triton ones, for ``device``."""
    gpu = device.startswith("cuda")
    built = [("level1/swish", SWISH)]
    if gpu:
        built += [(row.problem, row.path) for row in CORPUS if row.language == "cuda" and row.level <= 2]
    kind = "gpu" if gpu else "cpu"
    triton = [(row.problem, row.path) for row in CORPUS
              if row.language == "triton" and kind in row.devices and row.level == 1 and (gpu or row.cpu_subset)]
    runnable = []
    for group in (built, triton):
        keep = []
        for problem, path in group:
            try:
                check_runnable(find_problem(problem))
            except ProblemSkipped:
                continue
            keep.append((problem, path))
        runnable.append(keep)
    return runnable[0], runnable[1]


def write_solutions(directory: Path, device: str, cuda: int, triton: int, tag: str) -> tuple[list[str], dict]:
    """The solution files under ``directory/<problem stem>/``, interleaved in the run's order
    (a problem's files sort by name: ``NNN_kind.py``); the problem ids and each file's kind."""
    built, scripted = sources(device)
    if cuda and not built or triton and not scripted:
        raise SystemExit(f"no solutions of the kind asked for on {device}")
    total, order, counts = cuda + triton, [], {"cuda": 0, "triton": 0}
    for position in range(total):  # the Triton ones spread evenly among the others, as a model's run mixes them
        kind = "triton" if (position + 1) * triton // total > position * triton // total else "cuda"
        group = scripted if kind == "triton" else built
        order.append((kind, group[counts[kind] % len(group)]))
        counts[kind] += 1
    problems, kinds = [], {}
    for position, (kind, (problem_id, path)) in enumerate(order):
        problem = find_problem(problem_id)
        name = f"{problem.path.stem}/{position:03d}_{kind}.py"
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        source = path.read_text()
        target.write_text(f"# run_throughput {tag} copy {position} of {path.name}\n{source}")
        assert needs_build(target.read_text()) == (kind == "cuda"), f"{path} is not what its kind says"
        kinds[name] = kind
        if problem_id not in problems:
            problems.append(problem_id)
    return problems, kinds


def build_alone(solutions: Path, kinds: dict[str, str], device: str, tag: str) -> dict[str, Any]:
    """One cold build of the run's first built solution, as a new copy (its source made unique, so the
    build cache does not have it), alone on the machine before the run: what "about one cold build"
    means on this lease, which differs from one lease to the next by more than the scheduling can buy."""
    first = next(name for name, kind in kinds.items() if kind == "cuda")
    source = (solutions / first).read_text().replace(f"run_throughput {tag} copy", f"run_throughput {tag} alone copy", 1)
    with tempfile.TemporaryDirectory(prefix="kbench-alone-") as tmp:
        path = Path(tmp) / "solution.py"
        path.write_text(source)
        started = time.monotonic()
        answer = builds.build(path, device)  # not the run's instrumented judge.build
        return {"solution": first, "ok": answer["ok"], "wall_s": round(time.monotonic() - started, 3),
                "import_s": answer.get("import_seconds")}


# ---------------------------------------------------------------- what is recorded

class Clock:
    """Intervals and instants, in seconds since the run began, from any thread."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.lock = threading.Lock()
        self.evaluations: dict[str, dict] = {}
        self.builds: dict[str, dict] = {}
        self.verdicts: dict[str, dict] = {}

    def now(self) -> float:
        return time.monotonic() - self.started

    def interval(self, table: dict, key: str, field: str, **extra: Any) -> None:
        with self.lock:
            table.setdefault(key, {})[field] = round(self.now(), 3)
            table[key].update(extra)


def instrumented_evaluate(clock: Clock, names: dict[str, str]) -> Callable[..., Any]:
    """The run path's ``evaluate``, with its start and end stamped (it runs in a device thread)."""
    def evaluate(problem, solution, device, **options):
        name = names[str(solution.path)]
        clock.interval(clock.evaluations, name, "start", device=device, thread=threading.current_thread().name)
        phases = {}
        try:
            verdict = judge.evaluate(problem, solution, device, **options)
            phases = dict(verdict.phase_seconds)
            return verdict
        finally:
            clock.interval(clock.evaluations, name, "end", phases={k: round(v, 3) for k, v in phases.items()})
    return evaluate


def instrumented_build(clock: Clock, names: dict[str, str]) -> Callable[..., Any]:
    original = judge.build

    def build(solution, device=None, *args, **kwargs):
        name = names[str(solution.path)]
        clock.interval(clock.builds, name, "start")
        try:
            answer = original(solution, device, *args, **kwargs)
            clock.interval(clock.builds, name, "end", ok=answer["ok"], import_s=answer.get("import_seconds"),
                           init_s=answer.get("init_seconds"))
            return answer
        except BaseException:
            clock.interval(clock.builds, name, "end", ok=False)
            raise
    return build


class Listener:
    """Stamps each verdict as it reaches the caller's thread (the store's writer), and has
    the JSON written again (a run cut off by a time limit keeps what it had)."""

    def __init__(self, clock: Clock, names_by_sample: dict[tuple[str, int], str], save: Callable[[bool], None]):
        self.clock, self.names, self.save = clock, names_by_sample, save

    def started(self, total: int, done: list) -> None:
        pass

    def finished(self, record) -> None:
        name = self.names[(record.problem_id, record.sample_index)]
        self.clock.interval(self.clock.verdicts, name, "at", status=record.status)
        print(f"{self.clock.now():8.1f} s  {record.status:14s} {name}", flush=True)
        self.save(False)


# ---------------------------------------------------------------- the scheduling before issue 30

class PreviousExecutor(LocalExecutor):
    """``LocalExecutor`` as it scheduled before issue 30, for a before and after: every build
    submitted at once to ``build_jobs`` threads, the devices taking the jobs in the items' order
    whether built or not (a job reaching a device before its build builds in its own load)."""

    def map(self, items: Sequence[Any], run: Callable[[Any, str], Any], prebuild=None,
            needs_build=None) -> Iterator[tuple[int, Any]]:
        finished: queue.Queue = queue.Queue()
        threads = self.threads(lambda job, device: run(job[1], device), finished)
        builds = ThreadPoolExecutor(self.build_jobs, "kbench-build") if prebuild and self.build_jobs else None
        try:
            if builds is not None:
                for item in items:
                    builds.submit(prebuild, item, self.devices[0])
            for job in enumerate(items):
                threads.submit(job)
            for _ in range(len(items)):
                (index, _), result = next_result(finished)
                yield index, threads.received(result)
        finally:
            threads.close()
            if builds is not None:
                builds.shutdown(wait=False, cancel_futures=True)


class RampExecutor(LocalExecutor):
    """``LocalExecutor`` with the first builds' starts spread out, an experiment for issue 30's
    first verdict: the i-th of the first ``build_slots`` builds starts ``i * ramp_seconds`` after
    the first, so that the first runs nearly alone where builds started together slow each other
    (on the H200 seven ended together after 80-88 s, 55 s alone), and the builds end apart rather
    than at once; a slot, once its first build ends, goes on as before."""

    ramp_seconds = 8.0

    def map(self, items: Sequence[Any], run: Callable[[Any, str], Any], prebuild=None,
            needs_build=None) -> Iterator[tuple[int, Any]]:
        if prebuild is None:
            return super().map(items, run, prebuild, needs_build)
        slots, order = build_slots(self.build_jobs, len(self.devices)), itertools.count()

        def ramped(item: Any, device: str) -> Any:
            position = next(order)  # the builds' pool starts them in the items' order
            if position < slots:
                time.sleep(position * self.ramp_seconds)
            return prebuild(item, device)

        return super().map(items, run, ramped, needs_build)


# ---------------------------------------------------------------- the summary

def union_seconds(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end] covered by at least one of ``intervals``."""
    covered, reach = 0.0, start
    for a, b in sorted((max(a, start), min(b, end)) for a, b in intervals):
        if b <= reach:
            continue
        covered += b - max(a, reach)
        reach = b
    return covered


def summary(clock: Clock, wall: float) -> dict[str, Any]:
    verdicts = sorted(v["at"] for v in clock.verdicts.values())
    evaluations = [(e["start"], e.get("end", wall)) for e in clock.evaluations.values() if "start" in e]
    first = verdicts[0] if verdicts else None
    out: dict[str, Any] = {"verdicts": len(verdicts), "first_verdict_s": first, "total_wall_s": round(wall, 3)}
    if first is not None and wall > first:
        busy = union_seconds(evaluations, first, wall)
        out["busy_after_first_verdict"] = round(busy / (wall - first), 4)
        out["idle_after_first_verdict_s"] = round(wall - first - busy, 3)
        # Less each evaluation's own build (its import, where load_inline compiles: the verdict's
        # "build" phase, after any wait for the GPU), placed at its start: a device building is not
        # measuring or checking. Approximate (the workers' start comes first); it matters where a
        # solution reached a device unbuilt (--schedule previous, or a build needs_build missed).
        checking = [(e["start"] + p.get("waiting", 0.0) + p.get("build", 0.0), e.get("end", wall))
                    for e in clock.evaluations.values() if "start" in e for p in [e.get("phases") or {}]]
        out["busy_after_first_verdict_less_own_builds"] = round(
            union_seconds(checking, first, wall) / (wall - first), 4)
        out["own_build_s"] = round(
            sum((e.get("phases") or {}).get("build", 0.0) for e in clock.evaluations.values()), 3)
        per_device: dict[str, list] = {}
        for e in clock.evaluations.values():
            per_device.setdefault(e.get("thread", "?"), []).append((e["start"], e.get("end", wall)))
        out["busy_after_first_verdict_per_device_thread"] = {
            thread: round(union_seconds(spans, first, wall) / (wall - first), 4)
            for thread, spans in per_device.items()}
    builds = [b["end"] - b["start"] for b in clock.builds.values() if "end" in b]
    if builds:
        builds.sort()
        out["builds"] = len(builds)
        out["build_s_median"] = round(builds[len(builds) // 2], 3)
        out["build_s_max"] = round(builds[-1], 3)
        out["first_build_end_s"] = min(b["end"] for b in clock.builds.values() if "end" in b)
    spans = sorted(e.get("end", wall) - e["start"] for e in clock.evaluations.values())
    if spans:
        out["evaluation_s_median"] = round(spans[len(spans) // 2], 3)
    return out


def machine(device: str) -> dict[str, Any]:
    info: dict[str, Any] = {"host": platform.node(), "cpus": available_cpus(), "python": platform.python_version(),
                            "torch": torch.__version__, "kbench": kbench.__version__}
    if device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    nvcc = shutil.which("nvcc")
    if nvcc:
        done = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
        info["nvcc"] = (done.stdout.strip().splitlines() or [""])[-1]
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON, written after every verdict and at the end")
    parser.add_argument("--device", default=None, help="default: cuda where there is a GPU, else cpu")
    parser.add_argument("--gpus", default=None, help="comma-separated GPU indexes (as kbench run --gpus)")
    parser.add_argument("--cuda", type=int, default=40, help="solutions that build ahead (load_inline)")
    parser.add_argument("--triton", type=int, default=0, help="Triton solutions (no build ahead)")
    parser.add_argument("--build-jobs", type=int, default=14, help="the user's bound on builds ahead")
    parser.add_argument("--schedule", choices=("current", "previous", "ramp"), default="current",
                        help="previous: before issue 30; ramp: the first builds' starts spread out (--ramp-seconds)")
    parser.add_argument("--ramp-seconds", type=float, default=RampExecutor.ramp_seconds,
                        help="with --schedule ramp: between the starts of the first builds")
    parser.add_argument("--slots", type=int, default=None,
                        help="builds at once, before the first verdict and after, in place of build_slots's counts "
                             "(an experiment on the count; --slots 7 is the schedule before 10 beside judging)")
    parser.add_argument("--baseline", default=None, help="baseline columns, comma-separated (default: the run's)")
    parser.add_argument("--size", default="auto")
    parser.add_argument("--trials", type=int, default=judge.DEFAULT_TRIALS)
    parser.add_argument("--keep", type=Path, default=None, help="a directory to keep the solutions and the store in")
    parser.add_argument("--alone", action="store_true",
                        help="first, one cold build of another copy alone: the yardstick of 'about one cold build'")
    args = parser.parse_args()

    if args.slots:
        global build_slots
        build_slots = executor_module.build_slots = lambda build_jobs, devices, cpus=None, judging=False: args.slots
    device = resolve_device(args.device)
    devices = [resolve_device(f"cuda:{i}") for i in args.gpus.split(",")] if args.gpus else [device]
    tag = uuid.uuid4().hex[:12]
    work = args.keep or Path(tempfile.mkdtemp(prefix="kbench-throughput-"))
    solutions = work / "solutions"
    problem_ids, kinds = write_solutions(solutions, device, args.cuda, args.triton, tag)

    problems = runner.select_problems(problem_ids)
    plan = runner.plan_replay(problems, solutions)
    config = runner.run_config(
        plan, selection=problem_ids, solutions=solutions, device=device, size=resolve_size(args.size, device),
        trials=args.trials, timeout=judge.DEFAULT_TIMEOUT,
        baselines=tuple(args.baseline.split(",")) if args.baseline else None,
    )
    names = {sample.origin: sample.name for sample in plan.samples}
    by_sample = {(sample.problem_id, sample.index): sample.name for sample in plan.samples}
    kind = {"previous": PreviousExecutor, "ramp": RampExecutor}.get(args.schedule, LocalExecutor)
    executor = kind(devices, args.build_jobs)
    if isinstance(executor, RampExecutor):
        executor.ramp_seconds = args.ramp_seconds

    clock = Clock()
    judge.build = instrumented_build(clock, names)  # the run path builds ahead through judge.build
    print(f"{len(plan.samples)} solutions ({args.cuda} built ahead, {args.triton} Triton) on {devices}, "
          f"--build-jobs {args.build_jobs} ({build_slots(args.build_jobs, len(devices))} at once, "
          f"{build_slots(args.build_jobs, len(devices), judging=True)} once judging), "
          f"schedule {args.schedule}; in {work}", flush=True)

    def save(complete: bool) -> dict[str, Any]:
        with clock.lock:  # the device and build threads stamp meanwhile
            wall = clock.now()
            rows = [{"name": sample.name, "kind": kinds[sample.name], "problem": sample.problem_id,
                     "build": dict(clock.builds.get(sample.name) or {}) or None,
                     "evaluation": dict(clock.evaluations.get(sample.name) or {}) or None,
                     "verdict": clock.verdicts.get(sample.name)} for sample in plan.samples]
            figures = summary(clock, wall)
        result = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": sys.argv,
            "complete": complete,  # False: written after a verdict, the run still going
            "settings": {"devices": devices, "cuda": args.cuda, "triton": args.triton, "build_jobs": args.build_jobs,
                         "build_slots": build_slots(args.build_jobs, len(devices)), "schedule": args.schedule,
                         "ramp_seconds": args.ramp_seconds if args.schedule == "ramp" else None,
                         "size": config.size, "trials": config.trials, "baselines": list(config.baselines),
                         "executor": executor.describe(), "cuda_arch_list": os.environ.get("TORCH_CUDA_ARCH_LIST")},
            "machine": info,
            "summary": figures,
            "solutions": rows,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
        return result

    info = machine(device)
    if args.alone:
        info["one_cold_build_alone"] = build_alone(solutions, kinds, device, tag)
        print(f"one cold build alone, before the run: {json.dumps(info['one_cold_build_alone'])}", flush=True)
    with Store(work / "store.db") as store:
        clock.started = time.monotonic()
        runner.execute(store, f"throughput-{tag}", config, plan, evaluate=instrumented_evaluate(clock, names),
                       listener=Listener(clock, by_sample, save), executor=executor)
    print(json.dumps(save(True)["summary"], indent=1))
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
