"""Judging a patch to a task: ``evaluate_patch`` -> a Verdict with ``track = "repo"``.

In order, each step a gate (docs/patches.md):

1. a clean checkout of the pinned revision (kbench.repo.checkout);
2. the patch's paths, as git reads them, checked against the task's rules;
   the patch applied to a copy by git, and every path that changed checked
   again (kbench.repo.patch): ``compile_error`` when it does not apply,
   ``rejected`` naming the path it may not touch;
3. the static integrity rules on the Python files it added or changed
   (kbench.repo.integrity): ``rejected``;
4. the visible tests, then the hidden tests, two runs with pytest in the
   candidate's sandbox, with the task's time limit (kbench.repo.tests_run):
   ``incorrect`` naming the failing test, ``compile_error`` when a test module
   cannot import the patched repository; nothing the hidden run writes survives it;
5. the task's edge cases (what the hidden tests check) judged as the workload
   is, outputs only, against the base revision: a patch that behaves one way
   under pytest and another elsewhere is judged on the other;
6. the workload, judged by the kernel track's own judge (kbench.judge.evaluate)
   with the workload as the problem, the base checkout first on the reference
   worker's import path and the patched one on the sandboxed candidate's
   (kbench.judge.processes.sides): outputs compared on fresh seeds, interleaved timing,
   the trusted clock, every integrity rule; the speedup column is ``base``;
   the expert patch's checkout is one more column, timed beside them in
   the same rounds, so a correct patch's fraction of the expert's speedup is
   measured directly (kbench.repo.expert).
"""

from __future__ import annotations

import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

from kbench.core.solution import Solution
from kbench.core.verdict import Verdict
from kbench.judge.processes.devices import resolve_device, scratch_root
from kbench.judge.evaluation import DEFAULT_TIMEOUT, DEFAULT_TRIALS, evaluate
from kbench.judge.guard import DEFAULT_POLICY, action, check_policy
from kbench.judge.processes.sandbox import NO_SANDBOX, find_sandbox
from kbench.judge.processes.sides import Sides
from kbench.judge.protocol.timing import TimingSettings, check_settings
from kbench.repo.checkout import checkout, copy_tree
from kbench.repo.expert import EXPERT_COLUMN, SOLVED_FRACTION, expert_record
from kbench.repo.integrity import patch_findings
from kbench.repo.patch import Patch, PatchError, apply, check_paths, check_result, declared_paths, snapshot
from kbench.repo.task import Task, TaskError, find_task
from kbench.repo.tests_run import TestsRun, run_task_tests
from kbench.suite.problem import ProblemError, resolve_size

# What a run of the tests that did not pass becomes.
TESTS_STATUS = {"failed": "incorrect", "no_tests": "incorrect", "collection_error": "compile_error",
                "timeout": "timeout", "crashed": "crashed"}


# A repository's workload is timed in more, shorter rounds than a kernel, each with its buffers somewhere
# new, until the patch's fraction of the expert's speedup is on one side of the share that solves the task
# (Sides.decide_at); without the expert timed there is nothing to decide, and the rounds are ``rounds``.
# On the H200 (2026-12-02, docs/measurements/2026-12-02-repo-replays.md) the same expert patch in two workers differed
# by up to 10% a
# round in three rounds of 1.7 s: three rounds' t interval (t = 4.3) reached 23-49% below 1. Experts whose
# rounds move by 5% (fused-rmsnorm's) need about 13 rounds to be told from 95% of themselves: up to 32 lets
# such a patch be decided (solved in 99.4% of simulated evaluations, against 90.5% at 16;
# docs/measurements/2026-12-02-repo-replays.md).
REPO_TIMING = TimingSettings(max_calls=60, rounds=4, max_rounds=32, budget_seconds=4.0, new_placement_per_round=True,
                             target_speedup_error=0.01)


def evaluate_patch(
    task: Task | str | Path,
    patch: Patch | str | Path,
    device: str | None = None,
    *,
    size: str = "auto",
    trials: int = DEFAULT_TRIALS,
    timeout: float = DEFAULT_TIMEOUT,
    timing: TimingSettings | None = None,
    measure_time: bool = True,
    hidden_tests: bool = True,
    policy: str = DEFAULT_POLICY,
    sandbox: bool = True,
    memory_limit_bytes: int | None = None,
    expert: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Verdict:
    """Judge ``patch`` (a Patch, or the path of a patch file) for ``task`` (a Task, a bundled
    id or the path of a task.toml) and return the verdict (``track == "repo"``).

    ``timeout`` bounds the workload's evaluation (the tests have the task's own
    ``tests.timeout_s``); ``hidden_tests=False`` runs the visible tests only (what an
    agent may be told); ``measure_time=False`` checks the workload's outputs without
    timing them; ``timing``: REPO_TIMING by default (its ``rounds`` alone without the expert).
    ``expert``: time the task's expert patch beside the patch (the verdict's ``expert``: the
    patch's fraction of its speedup; False: not timed, ``expert`` empty).
    Raises TaskError for an unusable task (its workload failing at the base revision or
    with its expert patch included), PatchFileError for a patch file that cannot be read,
    ValueError for an unknown device, size or policy, SandboxUnavailable as ``evaluate``;
    every fault of the patch ends in a verdict.
    """
    task = task if isinstance(task, Task) else find_task(task)
    patch = patch if isinstance(patch, Patch) else Patch.from_file(patch)
    device = resolve_device(device)
    size = resolve_size(size, device)
    expert_patch = Patch.from_file(task.expert_patch) if expert and task.expert_patch else None
    timing = timing or (REPO_TIMING if expert_patch else replace(REPO_TIMING, max_rounds=0))
    check_settings(timing, device)
    problem = task.workload()
    options = dict(size=size, trials=trials, timeout=timeout, timing=timing, measure_time=measure_time,
                   hidden_tests=hidden_tests, policy=check_policy(policy), sandbox=sandbox,
                   memory_limit_bytes=memory_limit_bytes, progress=progress)
    return _PatchJudge(task, patch, device, problem, options, expert_patch).run()


class _PatchJudge:
    def __init__(self, task: Task, patch: Patch, device: str, problem: Any, options: dict[str, Any],
                 expert_patch: Patch | None):
        self.task, self.patch, self.device, self.problem, self.options = task, patch, device, problem, options
        self.expert_patch = expert_patch if options["measure_time"] else None
        self.tell: Callable[[str], None] = options["progress"] or (lambda step: None)
        self.sandbox = find_sandbox() if options["sandbox"] else None
        self.phases: dict[str, float] = {}
        self.started = time.monotonic()

    def run(self) -> Verdict:
        with tempfile.TemporaryDirectory(prefix="kbench-repo-", dir=scratch_root()) as tmp:
            tmp = Path(tmp)
            self.tell("checking out the pinned revision")
            with self._phase("checkout"):
                base = checkout(self.task.repository, tmp / "base")
                before = snapshot(base)
                patched = copy_tree(base, tmp / "patched")
            self.tell("applying the patch")
            try:
                with self._phase("patch"):
                    check_paths(self.task, declared_paths(self.patch, patched))
                    apply(self.patch, patched)
                    touched = check_result(self.task, before, patched)
            except PatchError as error:
                return self._verdict(error.status, error.reason)
            for finding in patch_findings(base, patched, touched):
                if action(finding.rule, self.options["policy"]) == "reject":
                    return self._verdict("rejected", finding.text())
            tests = self._tests(patched, tmp / "tests")
            if tests.status != "passed":
                return self._tests_verdict(tests)
            edges = self._edge_cases(base, patched, tests)
            if edges is not None:
                return edges
            return self._workload(base, patched, tests, self._expert_checkout(base, tmp / "expert"))

    def _expert_checkout(self, base: Path, where: Path) -> dict[str, Path]:
        """The expert patch applied to a copy of the base: the column timed beside (none without one)."""
        if self.expert_patch is None:
            return {}
        with self._phase("checkout"):
            tree = copy_tree(base, where)
            try:
                apply(self.expert_patch, tree)
            except PatchError as error:
                raise TaskError(f"task {self.task.id}: its expert patch does not apply: {error.reason}") from error
        return {EXPERT_COLUMN: tree}

    def _tests(self, patched: Path, scratch: Path) -> TestsRun:
        self.tell("running the tests" + ("" if self.options["hidden_tests"] else " (the visible ones)"))
        with self._phase("tests"):
            return run_task_tests(self.task, patched, scratch, self.device, sandbox=self.sandbox,
                                  build_key=self.patch.sha256, hidden=self.options["hidden_tests"])

    def _tests_verdict(self, tests: TestsRun) -> Verdict:
        """The verdict of a run of the tests that did not pass. A failure of the hidden run (the visible
        one passed) says so in its first words, whatever it was (a test, an import, a crash, the time
        limit): the reason is the judge's text, and what an agent is told of it is one line
        (kbench.agents.repo_prompts.feedback_for)."""
        status = TESTS_STATUS[tests.status]
        failed = tests.failures()
        which = "the hidden tests" if tests.hidden_ran else "the visible tests"
        if tests.status == "collection_error":
            reason = f"the patched repository does not import ({which}): {tests.summary()}"
        elif failed:
            reason = f"a {'hidden' if tests.hidden_ran else 'visible'} test failed: {tests.summary()}"
        else:
            reason = f"{which}: {tests.status}: {tests.summary()}"
        detail = "\n".join(f"{o.id}: {o.message}" for o in failed[:3])
        return self._verdict(status, f"{reason}\n{detail}".strip(), tests)

    def _edge_cases(self, base: Path, patched: Path, tests: TestsRun) -> Verdict | None:
        """The task's edge cases (``Task.edge_cases``) judged as the workload is, outputs only: the
        patched checkout in the sandboxed candidate worker, the base in the reference's, fresh seeds.
        There no switch on the tests' presence (pytest's variables or modules, argv, the call stack)
        can show the tests' behaviour, so what the hidden tests check is checked where the workload
        runs. None when the patch's outputs match the base's (or the task has none); else its verdict."""
        problem = self.task.edge_cases()
        if problem is None or not self.options["hidden_tests"]:  # they are the hidden tests' cases
            return None
        self.tell("checking the edge cases against the base revision")
        options = self.options
        try:
            verdict = evaluate(
                problem, Solution(problem.source, self.task.edge_cases_path), self.device, size=options["size"],
                trials=options["trials"], timeout=options["timeout"], measure_time=False,
                memory_limit_bytes=options["memory_limit_bytes"], policy=options["policy"], baselines=("eager",),
                baseline_cache=None, sandbox=options["sandbox"], progress=options["progress"],
                sides=Sides(reference=base, candidate=patched, candidate_key=self.patch.sha256))
        except ProblemError as exc:
            raise TaskError(f"task {self.task.id}: its edge cases fail at the base revision: {exc}") from exc
        self.phases["edge_cases"] = verdict.wall_seconds
        if verdict.correct:
            return None
        if verdict.status in ("rejected", "compile_error"):  # a rule's name first, or the import: not a case's
            reason = f"{verdict.reason}\n(in the edge cases' run, after the tests passed: {tests.summary()})"
        else:  # what a case gave: the hidden tests' kind, told to an agent as one line (repo_prompts.feedback_for)
            reason = (f"the edge cases (what the hidden tests check, run as the workload runs): {verdict.reason}\n"
                      f"(after the tests passed: {tests.summary()})")
        return replace(verdict, **self._identity(), reason=reason, baselines={"base": {"runtime_ms": None}},
                       speedup={"base": None}, speedup_interval={}, speedup_interval_within={},
                       phase_seconds={**self.phases, **verdict.phase_seconds},
                       wall_seconds=time.monotonic() - self.started, expert={})

    def _workload(self, base: Path, patched: Path, tests: TestsRun, columns: dict[str, Path]) -> Verdict:
        """The workload judged with the base checkout as the reference's code and the patched as the
        candidate's (and ``columns``, the expert's, timed beside)."""
        options = self.options
        try:
            verdict = evaluate(
                self.problem, Solution(self.problem.source, self.task.workload_path), self.device,
                size=options["size"], trials=options["trials"], timeout=options["timeout"],
                measure_time=options["measure_time"], timing=options["timing"],
                memory_limit_bytes=options["memory_limit_bytes"], policy=options["policy"], baselines=("eager",),
                baseline_cache=None, sandbox=options["sandbox"], progress=options["progress"],
                sides=Sides(reference=base, candidate=patched, candidate_key=self.patch.sha256, columns=columns,
                            decide_at={column: SOLVED_FRACTION for column in columns}))
        except ProblemError as exc:
            raise TaskError(f"task {self.task.id}: its workload fails at the base revision or with its expert "
                            f"patch: {exc}") from exc
        renamed = {key: _base_column(getattr(verdict, key))
                   for key in ("speedup", "speedup_interval", "speedup_interval_within", "baselines")}
        # A verdict's reason starts with what decided it (a rule's name first, for a rejection).
        reason = (f"tests: {tests.summary()}; workload: {verdict.reason}" if verdict.correct
                  else f"{verdict.reason}\n(the workload, after the tests passed: {tests.summary()})")
        verdict, expert = expert_record(replace(verdict, **renamed))
        return replace(verdict, **self._identity(), reason=reason, output_tail=verdict.output_tail,
                       phase_seconds={**self.phases, **verdict.phase_seconds},
                       wall_seconds=time.monotonic() - self.started, expert=expert)

    def _identity(self) -> dict[str, Any]:
        return dict(track="repo", problem=self.task.id, problem_path=str(self.task.path),
                    problem_sha256=self.task.sha256, solution_path=str(self.patch.path) if self.patch.path else None,
                    solution_sha256=self.patch.sha256)

    def _verdict(self, status: str, reason: str, tests: TestsRun | None = None) -> Verdict:
        """A verdict reached before the workload ran."""
        return Verdict(
            **self._identity(), device=self.device, size=self.options["size"], status=status, correct=False,
            reason=reason, baselines={"base": {"runtime_ms": None}}, speedup={"base": None},
            phase_seconds=dict(self.phases), wall_seconds=time.monotonic() - self.started,
            output_tail=_tests_output(tests), output_bytes=tests.output_bytes if tests else 0,
            policy=self.options["policy"], sandbox=self.sandbox.describe() if self.sandbox else NO_SANDBOX,
        )

    @contextmanager
    def _phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.monotonic() - start


def _tests_output(tests: TestsRun | None) -> str:
    """The tests' output for the verdict: the visible run's, and the hidden run's where it failed (for
    whoever reads the verdict; an agent is never told it: kbench.agents.repo_prompts.feedback_for)."""
    if tests is None:
        return ""
    if tests.hidden_ran and tests.status != "passed" and tests.hidden_output:
        return f"{tests.output}\n--- the hidden tests' run ---\n{tests.hidden_output}".strip()
    return tests.output


def _base_column(values: dict[str, Any]) -> dict[str, Any]:
    """The kernel track's eager column is the base revision here."""
    return {("base" if key == "eager" else key): value for key, value in values.items()}
