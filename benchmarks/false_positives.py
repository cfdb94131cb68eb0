"""How often does the judge call an honest solution a cheat? Judges the honest corpus
(tests/honest: every file on a GPU, the Triton files on a CPU) and counts, per rule,
the honest solutions it rejected and the ones it flagged. Every verdict but ``correct``
is a false positive, except a flag by a style rule the corpus's table expects of that
solution (``style_flags``: a KernelBench-style solution that leaves an add to PyTorch
honestly carries ``torch-compute``).

    PYTHONPATH=src python3 benchmarks/false_positives.py --out fp.json            # a GPU: all of it
    PYTHONPATH=src TRITON_INTERPRET=1 python3 benchmarks/false_positives.py --device cpu --load 2 --out fp.json
    ... [--repeat 3] [--build-jobs 14] [--policy lenient|strict|off] [--only relu l2_] [--fast-timing] [--pairs 4]
    ... [--max-pairs 6 --decide-at 0.5 0.8 1 1.5 2]

``--load N`` starts N processes that busy-loop on the CPU for the whole run (a shared
machine), stopped at the end; ``--build-jobs N`` builds the solutions ahead on the CPUs
while the device measures, as ``kbench run --build-jobs`` does. The default policy is
``lenient`` (integrity rules reject, style rules flag). The JSON holds every verdict
(file, problem, repeat, status, reason, flags, wall seconds) and the run's settings.
``--pairs N`` judges each solution in N worker pairs (kbench.judge.protocol.pairs): every pair is one
more chance for a rule that reads a time to fire on an honest solution, which this counts.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import kbench
from kbench.core.solution import Solution
from kbench.judge import LocalExecutor
from kbench.judge.builds.ahead import build, needs_build
from kbench.judge.confirmation import Unconfirmed
from kbench.judge.processes.devices import resolve_device
from kbench.judge.guard import POLICIES, RULES
from kbench.judge.protocol.pairs import pairs_taken
from kbench.judge.protocol.timing import TimingSettings, check_settings
from kbench.suite import find_problem
from kbench.suite.problem import ProblemError, ProblemSkipped, check_runnable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from honest.corpus import Honest, select  # noqa: E402

# The exploit suite's short protocol (tests/test_exploits.py): enough timed calls for the
# trusted clock to see every one, cheap enough for the Triton interpreter.
FAST_TIMING = TimingSettings(warmup_calls=3, warmup_seconds=0.0, min_calls=5, max_calls=20, budget_seconds=1.0)
BUSY_LOOP = "while True:\n    pass\n"


def start_load(processes: int) -> list[subprocess.Popen]:
    """``processes`` Python processes spinning on the CPU, as other tenants of a shared machine."""
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], stdin=subprocess.DEVNULL) for _ in range(processes)]


def stop_load(load: list[subprocess.Popen]) -> None:
    for process in load:
        process.terminate()
    for process in load:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def rule_of(text: str) -> str:
    """The rule a reason or a flag names first (``"trusted-clock: ..."``), or ``-``."""
    head = text.split(":", 1)[0].strip()
    return head if head in RULES else "-"


def row(honest: Honest, repeat: int, verdict: kbench.Verdict) -> dict:
    flagged = sorted({rule_of(flag) for flag in verdict.flags})
    return {
        "file": honest.file, "problem": honest.problem, "repeat": repeat, "status": verdict.status,
        "rule": rule_of(verdict.reason) if verdict.status == "rejected" else None,
        "reason": verdict.reason, "flags": verdict.flags, "flag_rules": flagged,
        "unexpected_flags": [rule for rule in flagged
                             if rule not in honest.style_flags and rule not in honest.known_false_flags],
        "known_false_flags": [rule for rule in flagged if rule in honest.known_false_flags],
        "wall_seconds": verdict.wall_seconds, "phase_seconds": verdict.phase_seconds,
        "runtime_ms": verdict.runtime_ms, "speedup": verdict.speedup.get("eager"),
        "speedup_interval": verdict.speedup_interval.get("eager"),
        "pairs": pairs_taken(verdict.timing),
        "device": verdict.device, "device_name": verdict.device_name, "size": verdict.size,
        "suspicions": verdict.suspicions,  # rejections that noise could have made, measured again
        "clock_spans_ms": {key: value for key, value in (verdict.timing or {}).items()
                           if key in CLOCK_SPANS},  # what the trusted clock and timer-mismatch read
    }


# The timing fields the noisy rules read (kbench.judge.trusted.calls.trusted_clock_findings, timer-mismatch).
CLOCK_SPANS = ("median_ms", "host_median_ms", "candidate_excess_ms", "eager_excess_ms", "candidate_digest_ms",
               "eager_digest_ms")


def unjudged_row(honest: Honest, repeat: int, status: str, reason: str) -> dict:
    """A row without a verdict: ``skipped`` (the problem needs a module this Python lacks), or
    ``no-verdict`` (two evaluations raised different suspicions), ``problem_error``, ``infra_error``."""
    return {"file": honest.file, "problem": honest.problem, "repeat": repeat, "status": status, "rule": None,
            "reason": reason, "flags": [], "flag_rules": [], "unexpected_flags": [], "wall_seconds": 0.0,
            "suspicions": [], "clock_spans_ms": {}}


def evaluate_or_say_why(item: tuple[Honest, int], device: str, options: dict) -> kbench.Verdict | dict:
    """The verdict, or the row saying why there is none: one honest solution that
    gets no verdict must not end the benchmark (``evaluate_many`` would raise)."""
    honest, repeat = item
    try:
        return kbench.evaluate(honest.problem, honest.path, device, **options)
    except Unconfirmed as exc:
        return unjudged_row(honest, repeat, "no-verdict", str(exc))
    except ProblemError as exc:
        return unjudged_row(honest, repeat, "problem_error", str(exc))
    except Exception as exc:  # noqa: BLE001 - counted, shown, and the run goes on
        return unjudged_row(honest, repeat, "infra_error", f"{type(exc).__name__}: {exc}")


def judge(rows: list[Honest], args: argparse.Namespace):
    """Yields a result row per (solution, repeat) as each evaluation finishes."""
    jobs, skipped = [], []
    for repeat in range(args.repeat):
        for honest in rows:
            try:
                check_runnable(find_problem(honest.problem))
            except ProblemSkipped as exc:
                skipped.append(unjudged_row(honest, repeat, "skipped", str(exc)))
                continue
            jobs.append((honest, repeat))
    yield from skipped
    options = {"policy": args.policy, "size": args.size, "trials": args.trials, "timeout": args.timeout}
    options["timing"] = dataclasses.replace(FAST_TIMING if args.fast_timing else TimingSettings(), pairs=args.pairs,
                                            max_pairs=args.max_pairs, decide_at=tuple(args.decide_at))
    executor = LocalExecutor([args.device], build_jobs=args.build_jobs)
    prebuild = lambda item, device: build(Solution.from_file(item[0].path), device,  # noqa: E731
                                          problem=find_problem(item[0].problem), size=args.size)
    worth_building = lambda item: needs_build(item[0].path.read_text())  # noqa: E731 - Triton ones go at once
    for index, verdict in executor.map(jobs, lambda item, device: evaluate_or_say_why(item, device, options),
                                       prebuild, worth_building):
        honest, repeat = jobs[index]
        yield verdict if isinstance(verdict, dict) else row(honest, repeat, verdict)


def report(results: list[dict]) -> None:
    judged = [r for r in results if r["status"] != "skipped"]
    files = {r["file"] for r in judged}
    print(f"\n{len(judged)} evaluations of {len(files)} honest solutions "
          f"({sum(r['status'] == 'skipped' for r in results)} skipped)")
    statuses = collections.Counter(r["status"] for r in judged)
    print("  statuses: " + ", ".join(f"{status} {count}" for status, count in statuses.most_common()))
    rejected = collections.defaultdict(set)
    flagged = collections.defaultdict(set)
    unexpected = collections.defaultdict(set)
    for r in judged:
        if r["status"] == "rejected":
            rejected[r["rule"]].add(r["file"])
        for rule in r["flag_rules"]:
            flagged[rule].add(r["file"])
        for rule in r["unexpected_flags"]:
            unexpected[rule].add(r["file"])
    rules = sorted(set(rejected) | set(flagged))
    if rules:
        print(f"\n  {'rule':<24} {'rejected':>9} {'flagged':>8} {'flagged, unexpected':>20}   (honest solutions)")
        for rule in rules:
            print(f"  {rule:<24} {len(rejected[rule]):>9} {len(flagged[rule]):>8} {len(unexpected[rule]):>20}")
    else:
        print("  no rule rejected or flagged any honest solution")
    wrong = [r for r in judged if r["status"] != "correct"]
    if wrong:
        print("\n  every verdict but correct:")
        for r in wrong:
            print(f"    {r['file']} (repeat {r['repeat']}): {r['status']}: {r['reason'].splitlines()[0][:400]}")
    for heading, key in (("flags the corpus does not expect", "unexpected_flags"),
                         ("false flags the corpus knows of (a defect of the judge, docs/guard.md)",
                          "known_false_flags")):
        odd = [r for r in judged if r.get(key)]
        if odd:
            print(f"\n  {heading}:")
            for r in odd:
                print(f"    {r['file']} (repeat {r['repeat']}): {'; '.join(f[:200] for f in r['flags'])}")
    suspected = [r for r in judged if r.get("suspicions")]
    if suspected:
        print("\n  suspicions measured again (not a verdict unless seen twice):")
        for r in suspected:
            print(f"    {r['file']} (repeat {r['repeat']}): then {r['status']}; first: {r['suspicions'][0][:300]}")
    pairs = collections.Counter(r["pairs"] for r in judged if "pairs" in r)
    if set(pairs) - {1}:
        print("\n  worker pairs per verdict: " + ", ".join(f"{n}: {count}" for n, count in sorted(pairs.items())))
    walls = sorted(r["wall_seconds"] for r in judged if r["wall_seconds"])
    if walls:
        print(f"\n  wall per evaluation: median {walls[len(walls) // 2]:.1f} s ({walls[0]:.1f}-{walls[-1]:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: a GPU if there is one)")
    parser.add_argument("--size", default="auto", help="auto (default on a GPU, small on a CPU), default or small")
    parser.add_argument("--policy", default="lenient", choices=POLICIES)
    parser.add_argument("--load", type=int, default=0, help="busy-looping processes beside the run")
    parser.add_argument("--build-jobs", type=int, default=0, help="builds running ahead of the device")
    parser.add_argument("--repeat", type=int, default=1, help="times the whole selection is judged")
    parser.add_argument("--only", nargs="*", default=None, help="only files or problems containing these words")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--fast-timing", action="store_true",
                        help="the exploit suite's short timing protocol (for the Triton interpreter)")
    parser.add_argument("--pairs", type=int, default=1, help="worker pairs each solution is judged in")
    parser.add_argument("--max-pairs", type=int, default=0, help="more pairs, up to this many, until narrow")
    parser.add_argument("--decide-at", type=float, nargs="*", default=[],
                        help="with --max-pairs: more pairs only while the interval holds one of these speedups")
    parser.add_argument("--out", type=Path, required=True, help="a JSON of every verdict and the settings")
    args = parser.parse_args()
    args.device = resolve_device(args.device)
    try:
        check_settings(TimingSettings(pairs=args.pairs, max_pairs=args.max_pairs, decide_at=tuple(args.decide_at)),
                       args.device)
    except ValueError as exc:
        parser.error(str(exc))
    rows = select(args.device, args.only)
    if not rows:
        parser.error(f"no corpus file for {args.device} matches --only {args.only}")
    settings = {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()}
    settings.update(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    host=platform.node(), cpus=__import__("os").cpu_count())
    print(f"judging {len(rows)} honest solutions x {args.repeat} on {args.device}, policy {args.policy}, "
          f"load {args.load}, build jobs {args.build_jobs}", flush=True)
    results: list[dict] = []
    load = start_load(args.load)
    started = time.monotonic()
    try:
        for result in judge(rows, args):
            results.append(result)
            print(f"  {result['file']:<44} {result['status']:<13} {result['wall_seconds']:6.1f} s  "
                  f"{(result['reason'].splitlines() or [''])[0][:160] if result['status'] != 'correct' else ''}"
                  f"{' flags: ' + ','.join(result['flag_rules']) if result['flag_rules'] else ''}", flush=True)
            args.out.write_text(json.dumps({"settings": settings, "verdicts": results}, indent=1))
    finally:
        stop_load(load)
    settings["wall_seconds"] = round(time.monotonic() - started, 1)
    args.out.write_text(json.dumps({"settings": settings, "verdicts": results}, indent=1))
    report(results)


if __name__ == "__main__":
    main()
