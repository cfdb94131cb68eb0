"""Check every bundled repository task on the CPU, with plain git, pytest and the workload in subprocesses.

For each task (src/kbench/repo/tasks/<repository>/<task>/):

1. the pinned commit checks out of the bundle, and the base passes the visible and hidden tests;
2. the expert patch applies (git apply), touches only allowed paths, and passes the visible and hidden tests;
3. the broken patch applies, passes the visible tests and fails at least one hidden test;
4. the workload at its small size gives the same outputs on the base and the expert checkout (each in its own
   process, seeded alike, compared with the judge's comparison and the workload's tolerance), for two input
   seeds, and the two seeds' outputs differ (the outputs depend on the inputs).

    PYTHONPATH=src python benchmarks/repo_tasks_check.py [--out results.json] [TASK_ID ...]

Exit status 0 when every task passes every check. It needs the Python that has torch, Triton (for its
interpreter) and pytest: /work/main/.venv/bin/python on the development machine. A task takes from ~30 s
(pointkit) to a few minutes (tinylm: its tests run Triton kernels in the interpreter).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import repo_tasks_common as common

SEEDS = (11, 12)


def check_task(task: common.SuiteTask) -> dict:
    result: dict = {"task": task.id, "kind": task.kind, "checks": {}, "ok": False}
    checks = result["checks"]
    with common.Scratch() as tmp:
        base = common.checkout(task, tmp / "base")
        hidden = common.add_hidden_tests(task, base)
        run = common.run_pytest(base, [*task.visible, *hidden], task.timeout_s)
        checks["base passes visible and hidden tests"] = _verdict(run.ok, run)

        expert = common.checkout(task, tmp / "expert")
        try:
            touched = common.apply_patch(task, task.expert, expert)
            checks["expert applies, touching only allowed paths"] = {"ok": True, "paths": touched}
        except RuntimeError as exc:
            checks["expert applies, touching only allowed paths"] = {"ok": False, "detail": str(exc)}
            return result
        common.add_hidden_tests(task, expert)
        run = common.run_pytest(expert, [*task.visible, *hidden], task.timeout_s)
        checks["expert passes visible and hidden tests"] = _verdict(run.ok, run)

        broken = common.checkout(task, tmp / "broken")
        try:
            touched = common.apply_patch(task, task.broken, broken)
            checks["broken applies, touching only allowed paths"] = {"ok": True, "paths": touched}
        except RuntimeError as exc:
            checks["broken applies, touching only allowed paths"] = {"ok": False, "detail": str(exc)}
            return result
        run = common.run_pytest(broken, list(task.visible), task.timeout_s)
        checks["broken passes the visible tests"] = _verdict(run.ok, run)
        common.add_hidden_tests(task, broken)
        run = common.run_pytest(broken, hidden, task.timeout_s)
        checks["broken fails a hidden test"] = {"ok": not run.ok and run.failed != ["<timeout>"],
                                                "failed": run.failed}

        checks["workload: base and expert agree, outputs depend on inputs"] = workload_check(task, base, expert, tmp)
    result["ok"] = all(c["ok"] for c in checks.values())
    return result


def workload_check(task: common.SuiteTask, base: Path, expert: Path, tmp: Path) -> dict:
    outputs: dict[tuple[str, int], Path] = {}
    for name, repo in (("base", base), ("expert", expert)):
        for seed in SEEDS:
            out = tmp / f"{name}-{seed}.pt"
            cmd = common.worker_command(repo, task, "small", "cpu", "--once", "--seed", str(seed), "--out", str(out))
            done = subprocess.run(cmd, capture_output=True, text=True, env=common.worker_env("cpu"), timeout=600)
            if done.returncode:
                return {"ok": False, "detail": f"{name} workload, seed {seed}: {done.stderr[-2000:]}"}
            outputs[(name, seed)] = out
    import torch

    load = {key: torch.load(path, weights_only=False) for key, path in outputs.items()}
    tolerance = workload_tolerance(task)
    detail = {}
    ok = True
    for seed in SEEDS:
        agree, why = compare(load[("base", seed)], load[("expert", seed)], tolerance)
        detail[f"seed {seed}"] = why
        ok &= agree
    same, _ = compare(load[("base", SEEDS[0])], load[("base", SEEDS[1])], {})
    detail["seeds differ"] = not same
    ok &= not same
    return {"ok": ok, **detail}


def workload_tolerance(task: common.SuiteTask) -> dict:
    from kbench.suite.problem import load_problem

    return {**load_problem(task.workload).tolerance, **task.tolerance}


def compare(expected, actual, tolerance: dict) -> tuple[bool, str]:
    """The judge's own comparison (kbench.judge.trusted.compare) where it imports, else exact structure and allclose."""
    try:
        from kbench.judge.trusted.compare import compare_outputs
    except ImportError:
        return _allclose(expected, actual, tolerance)
    result = compare_outputs(expected, actual, {}, {}, tolerance)
    return result.ok, f"{result.check}: {result.detail}"


def _allclose(expected, actual, tolerance: dict) -> tuple[bool, str]:
    import torch

    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return False, "structure"
        for e, a in zip(expected, actual):
            ok, why = _allclose(e, a, tolerance)
            if not ok:
                return ok, why
        return True, "ok"
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return False, "shape or dtype"
    if not expected.is_floating_point():
        return bool(torch.equal(expected, actual)), "exact"
    tol = tolerance.get(str(expected.dtype).removeprefix("torch."), {"atol": 1e-4, "rtol": 1e-4})
    return bool(torch.allclose(actual, expected, atol=tol["atol"], rtol=tol["rtol"], equal_nan=True)), "allclose"


def _verdict(ok: bool, run: common.TestRun) -> dict:
    verdict = {"ok": ok, "failed": run.failed}
    if not ok:
        verdict["tail"] = run.tail
    return verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="task ids (default: all)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    results = []
    for task in common.suite(args.tasks):
        started = time.monotonic()
        try:
            result = check_task(task)
        except Exception as exc:  # a task that cannot even be checked is a failed task, named
            result = {"task": task.id, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        result["seconds"] = round(time.monotonic() - started, 1)
        results.append(result)
        print(f"{'PASS' if result['ok'] else 'FAIL'} {task.id} ({result['seconds']} s)")
        for name, check in result.get("checks", {}).items():
            if not check["ok"]:
                print(f"    failed: {name}: {json.dumps({k: v for k, v in check.items() if k != 'ok'})[:3000]}")
            elif name == "broken fails a hidden test":
                print(f"    broken caught by: {', '.join(check['failed'])}")
        if "error" in result:
            print(f"    {result['error']}")
        sys.stdout.flush()
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2))
    failed = [r["task"] for r in results if not r["ok"]]
    summary = f"{len(results) - len(failed)} of {len(results)} tasks pass"
    print(summary + (f"; failing: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
