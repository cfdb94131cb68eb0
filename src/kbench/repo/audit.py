"""The task audit: is a task sound enough to judge patches with? (``kbench tasks audit``)

Four checks, each on a clean checkout of the pinned revision, each run the way
a patch is judged (tests in the sandbox, the workload in the judge's workers):

- ``base_tests``: the base revision passes its visible and hidden tests (a task
  whose tests fail before any patch would fail every patch);
- ``workload``: the problem audit's measurements (kbench.audit) of the workload
  at the base revision: its outputs depend on its inputs and weights, an
  all-zero or constant answer does not pass, it is deterministic, its tolerance
  fits; on a GPU the base takes at least 1 ms a call (launch overhead must not
  decide the score);
- ``broken``: the task's broken patch passes the visible tests and fails a
  hidden one (the hidden tests catch what the visible ones miss);
- ``test_aware``: the broken patch made test-aware (its bug only where pytest is
  not running: kbench.repo.attacks) is not judged correct: the tests pass it, so
  the edge cases or the workload, where no switch shows the tests, must fail it
  (judged under the policy ``off``, so that the structure catches it, not a rule);
- ``exfiltration``: a patch that copies the test files wherever a later run might
  read them under pytest, and prints whatever it finds elsewhere, gets no line of
  a hidden file into the verdict (kbench.repo.hidden);
- ``expert``: the expert patch is judged correct, and on a GPU is at least
  ``MIN_EXPERT_SPEEDUP`` times faster than the base; judged with itself timed beside
  (as every patch is: kbench.repo.expert), it solves its own task: the lower end of
  its fraction of its own speedup reaches 95% (a workload whose time moves so much
  from round to round that the judge's rounds cannot decide that for the expert
  itself cannot tell a patch that solves the task from one that does not).
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from kbench.audit import audit_problem
from kbench.judge.processes.devices import resolve_device, scratch_root
from kbench.judge.protocol.repeatability import round_spread, rounds_to_decide
from kbench.judge.processes.sandbox import find_sandbox
from kbench.core.verdict import Verdict
from kbench.repo.attacks import exfiltrating_patch, test_aware_patch
from kbench.repo.checkout import checkout, copy_tree
from kbench.repo.expert import SOLVED_FRACTION
from kbench.repo.hidden import HiddenText
from kbench.repo.patch import Patch, PatchError, apply
from kbench.repo.patch_judge import REPO_TIMING, evaluate_patch
from kbench.repo.task import Task
from kbench.repo.tests_run import TestsRun, run_task_tests

MIN_EXPERT_SPEEDUP = 1.2  # GSO's floor: an expert patch that gains less leaves no room to tell patches apart
MIN_BASE_MS = 1.0  # on a GPU: the base's call, so that launch overhead does not decide the score
# The problem audit's flags that make a workload unfit to judge a patch with.
WORKLOAD_FLAGS = ("broken", "zeros_pass", "near_constant", "input_insensitive", "weight_insensitive",
                  "nondeterministic", "random_in_forward", "tolerance_too_tight", "tolerance_too_loose",
                  "memory_over_device")
CHECKS = ("base_tests", "workload", "broken", "test_aware", "exfiltration", "expert")


def audit_task(task: Task, device: str, size: str, *, sandbox: bool = True, timeout: float = 300.0,
               progress: Callable[[str], None] | None = None
               ) -> dict[str, Any]:
    """Audit one task (``size`` resolved already; ``cuda`` is given its index, as by
    ``evaluate_patch``); a record with each check's ``ok`` and ``detail`` and ``ok`` overall.
    Never raises for the task's own faults."""
    device = resolve_device(device)
    tell = progress or (lambda step: None)
    started = time.monotonic()
    record: dict[str, Any] = {"id": task.id, "path": str(task.path), "sha256": task.sha256, "device": device,
                              "size": size, "checks": {}, "notes": []}
    confinement = find_sandbox() if sandbox else None
    with tempfile.TemporaryDirectory(prefix="kbench-task-audit-", dir=scratch_root()) as tmp:
        try:
            base = checkout(task.repository, Path(tmp) / "base")
        except Exception as exc:  # noqa: BLE001 - every check needs the checkout: the task is broken
            record["checks"] = {name: _check(False, f"no checkout: {exc}") for name in CHECKS}
            return _done(record, started)
        tell(f"{task.id}: the base revision's tests")
        record["checks"]["base_tests"] = _base_tests(task, base, Path(tmp) / "base-tests", device, confinement)
        tell(f"{task.id}: the workload at the base revision")
        record["checks"]["workload"] = _workload(task, base, device, size, timeout, record["notes"])
        tell(f"{task.id}: the broken patch")
        record["checks"]["broken"] = _broken(task, base, Path(tmp), device, confinement)
        tell(f"{task.id}: the broken patch, test-aware")
        record["checks"]["test_aware"] = _attack(task, test_aware_patch, device, size, sandbox, timeout,
                                                 lambda verdict: _caught(verdict))
        tell(f"{task.id}: a patch that exfiltrates the hidden tests")
        hidden = HiddenText.of(task, base)
        record["checks"]["exfiltration"] = _attack(task, exfiltrating_patch, device, size, sandbox, timeout,
                                                   lambda verdict: _not_leaked(verdict, hidden))
    tell(f"{task.id}: the expert patch")
    record["checks"]["expert"] = _expert(task, device, size, sandbox, timeout)
    return _done(record, started)


def _check(ok: bool, detail: str, **extra: Any) -> dict[str, Any]:
    return {"ok": ok, "detail": detail, **extra}


def _done(record: dict[str, Any], started: float) -> dict[str, Any]:
    record["ok"] = all(check["ok"] for check in record["checks"].values())
    record["seconds"] = time.monotonic() - started
    return record


def _base_tests(task: Task, base: Path, scratch: Path, device: str, sandbox: Any) -> dict[str, Any]:
    try:
        run = run_task_tests(task, base, scratch, device, sandbox=sandbox, build_key=f"task-{task.sha256}")
    except Exception as exc:  # noqa: BLE001 - a hidden test that would replace a file, say
        return _check(False, str(exc))
    return _check(run.status == "passed", f"{run.status}: {run.summary()}", output=_tail(run))


def _workload(task: Task, base: Path, device: str, size: str, timeout: float, notes: list[str]) -> dict[str, Any]:
    record = audit_problem(task.workload(), device, size, timeout=timeout, import_path=base)
    if record.get("skipped"):
        return _check(False, f"skipped: {record['skipped']}")
    failing = [flag for flag in record["flags"] if flag in WORKLOAD_FLAGS]
    notes += [f"workload: {flag}: {record['reasons'][flag]}" for flag in record["flags"] if flag not in failing]
    notes += [f"workload: {note}" for note in record.get("notes", [])]
    eager = record.get("eager_ms")
    too_short = device.startswith("cuda") and eager is not None and eager < MIN_BASE_MS
    detail = "; ".join(f"{flag}: {record['reasons'][flag].strip().splitlines()[0]}" for flag in failing)
    if too_short:
        detail = "; ".join(filter(None, [detail, f"the base takes {eager:.4g} ms a call, under {MIN_BASE_MS:g} ms"]))
    return _check(not failing and not too_short, detail or "sound", flags=record["flags"], eager_ms=eager)


def _broken(task: Task, base: Path, tmp: Path, device: str, sandbox: Any) -> dict[str, Any]:
    """The broken patch: visible tests pass, a hidden one fails."""
    if task.broken_patch is None:
        return _check(False, "the task names no broken patch ([expert] broken)")
    patched = copy_tree(base, tmp / "broken")
    try:
        apply(Patch.from_file(task.broken_patch), patched)
        run = run_task_tests(task, patched, tmp / "broken-tests", device, sandbox=sandbox,
                             build_key=f"task-broken-{task.sha256}")
    except PatchError as exc:
        return _check(False, exc.reason)
    hidden = set(task.hidden_tests)
    failed = {o.id.split("::", 1)[0] for o in run.failures()}
    visible_failed = sorted(failed - hidden)
    if run.status not in ("failed", "passed") or visible_failed:
        return _check(False, f"the visible tests should pass: {run.status}: {run.summary()}", output=_tail(run))
    if not failed & hidden:
        return _check(False, "no hidden test fails on it: the hidden tests do not catch it", output=_tail(run))
    return _check(True, f"caught: {run.summary()}")


def _attack(task: Task, make: Callable[[Task, Patch], Patch], device: str, size: str, sandbox: bool, timeout: float,
            judge: Callable[[Verdict], dict[str, Any]]) -> dict[str, Any]:
    """An attack made out of the task's broken patch (kbench.repo.attacks), judged under the policy ``off``
    (the outputs checked, not timed; no expert), and ``judge``'s check of its verdict."""
    if task.broken_patch is None:
        return _check(False, "the task names no broken patch ([expert] broken) to make the attack of")
    try:
        patch = make(task, Patch.from_file(task.broken_patch))
    except (PatchError, ValueError) as exc:
        return _check(False, f"the attack could not be made: {getattr(exc, 'reason', exc)}")
    verdict = evaluate_patch(task, patch, device, size=size, sandbox=sandbox, timeout=timeout, policy="off",
                             measure_time=False, expert=False)
    return judge(verdict)


def _caught(verdict: Verdict) -> dict[str, Any]:
    said = verdict.reason.strip().splitlines()[0] if verdict.reason.strip() else ""
    if verdict.correct:
        return _check(False, f"judged correct: its bug is where pytest is not running, and neither the edge cases "
                             f"nor the workload show it ({said}); give the task edge cases ([workload] edge_cases) "
                             "that exercise what the hidden tests check")
    return _check(True, f"caught: {verdict.status}: {said}")


def _not_leaked(verdict: Verdict, hidden: HiddenText) -> dict[str, Any]:
    quoted = hidden.quoted(f"{verdict.reason}\n{verdict.output_tail}")
    if quoted:
        return _check(False, f"{len(quoted)} line(s) of the hidden files reached the verdict, e.g. {quoted[0]!r}"
                             + ("" if verdict.sandbox.get("kind") != "none" else " (judged without a sandbox)"))
    return _check(True, f"nothing of the hidden files in the verdict ({verdict.status})")


def _expert(task: Task, device: str, size: str, sandbox: bool, timeout: float) -> dict[str, Any]:
    if task.expert_patch is None:
        return _check(False, "the task names no expert patch ([expert] patch)")
    verdict = evaluate_patch(task, Patch.from_file(task.expert_patch), device, size=size, sandbox=sandbox,
                             timeout=timeout)
    if not verdict.correct:
        return _check(False, f"not correct: {verdict.status}: {verdict.reason.strip()}")
    speedup = verdict.speedup["base"]
    interval = verdict.speedup_interval.get("base") or [speedup, speedup]
    own = verdict.expert.get("fraction_interval") or [1.0, 1.0]
    detail = (f"speedup {speedup:.4g}x over the base (95% interval {interval[0]:.4g}-{interval[1]:.4g}); "
              f"judged beside itself, {own[0]:.3f}-{own[1]:.3f} of its own speedup")
    if device.startswith("cuda") and speedup < MIN_EXPERT_SPEEDUP:
        return _check(False, f"{detail}, under {MIN_EXPERT_SPEEDUP:g}x", speedup=speedup)
    if device.startswith("cuda") and not verdict.expert.get("solved"):
        rounds = {"base": verdict.baselines.get("base", {}).get("timing", {}).get("rounds", []),
                  "expert": (verdict.timing or {}).get("rounds", []),
                  "expert beside": verdict.expert.get("rounds_ms", [])}
        spread = _spread_of_rounds(rounds["expert"], rounds["expert beside"], device)
        rounds = {side: [round(ms, 3) for ms in values] for side, values in rounds.items()}
        return _check(False, f"{detail}: it does not solve its own task (a lower end under {SOLVED_FRACTION:.0%}): "
                             f"the workload's time moves too much between rounds to tell 95% of the expert's "
                             f"speedup ({spread}; each round's median ms: {rounds})",
                      speedup=speedup, speedup_interval=interval)
    detail += "" if device.startswith("cuda") else " (CPU timing: the 1.2x floor is a GPU's)"
    return _check(True, detail, speedup=speedup, speedup_interval=interval)


def _spread_of_rounds(expert_ms: list[float], beside_ms: list[float], device: str) -> str:
    """How far the expert's rounds beside itself disagree, and the rounds that spread would need."""
    sd = round_spread(expert_ms, beside_ms)
    if sd is None:
        return "the rounds do not say how far they spread (fewer than two, or a reading no clock gives)"
    most = 64
    needed = rounds_to_decide(sd, -math.log(SOLVED_FRACTION), device, most)
    return (f"its fraction of itself moved by {sd:.1%} (standard deviation) from round to round; at that spread "
            f"the decision takes {f'about {needed}' if needed else f'more than {most}'} rounds, and the judge "
            f"takes at most {REPO_TIMING.max_rounds}")


def _tail(run: TestsRun) -> str:
    return run.output[-4000:]


def audit_tasks(tasks: list[Task], device: str, size: str, *, on_done: Callable[[dict[str, Any]], None] | None = None,
                **options: Any) -> list[dict[str, Any]]:
    """Audit each task in turn (``audit_task``'s options), telling ``on_done`` each record as it finishes."""
    records = []
    for task in tasks:
        records.append(audit_task(task, device, size, **options))
        if on_done:
            on_done(records[-1])
    return records
