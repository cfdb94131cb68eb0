"""Hand-made runs, verdicts and a fake judge for the tests of runs, the store and scores."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import PROBLEM

from kbench.core.verdict import Verdict
from kbench.runs.manifest import Manifest, RunConfig
from kbench.runs.records import EvaluationRecord, ProblemRecord, RunData, RunRecord, SampleRecord, SessionRecord

# A fake solution says what verdict it gets: "# fake: correct 1.5" or "# fake: incorrect", and
# a flag of the guard after it: "# fake: correct 1.5 flag=torch-compute".
FAKE_MARK = re.compile(r"# fake: (\w+)(?: ([\d.]+))?(?: flag=([\w-]+))?")


def make_verdict(problem_id: str, status: str, speedup: float | None = None, flags: tuple[str, ...] = ()) -> Verdict:
    correct = status == "correct"
    return Verdict(
        problem=problem_id,
        problem_path=f"/problems/{problem_id}.py",
        problem_sha256="0" * 64,
        solution_path=None,
        solution_sha256="1" * 64,
        device="cpu",
        size="small",
        status=status,
        correct=correct,
        reason=f"made by hand: {status}",
        runtime_ms=1.0 / speedup if correct and speedup else None,
        baselines={"eager": {"runtime_ms": 1.0 if correct and speedup else None}},
        speedup={"eager": speedup if correct else None},
        flags=[f"{rule}: made by hand" for rule in flags],
    )


class FakeJudge:
    """Stands in for ``kbench.evaluate``: reads the verdict off the solution's mark, and
    remembers what it was asked."""

    def __init__(self, fail_after: int | None = None):
        self.calls: list[tuple[str, str]] = []
        self.fail_after = fail_after

    def __call__(self, problem, solution, device, *, size, trials, timeout, policy, baselines=("eager",), timing=None,
                 sandbox=True, dtype="float32"):
        self.policy, self.baselines, self.timing, self.sandbox, self.dtype = policy, baselines, timing, sandbox, dtype
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt
        self.calls.append((problem.id, solution.path.name))
        status, speedup, flag = FAKE_MARK.search(solution.source).groups()
        return make_verdict(problem.id, status, float(speedup) if speedup else None, (flag,) if flag else ())


def problem_dir(root: Path, names: list[str], level: int = 1) -> Path:
    """Copies of the fixture problem under ``root/level<N>/<name>.py``."""
    directory = root / f"level{level}"
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(PROBLEM, directory / f"{name}.py")
    return directory


def fake_solution(path: Path, mark: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# fake: {mark}\nclass ModelNew: pass\n")
    return path


def config(**changes) -> RunConfig:
    fields = dict(selection=("level1",), solutions="/solutions", device="cpu", size="small", trials=5,
                  timeout=300.0, baselines=("eager",), suite_sha256="s" * 64, solutions_sha256="t" * 64)
    return RunConfig(**{**fields, **changes})


def run_data(spec: list[tuple[str, int | None, list | None]], name: str = "hand") -> RunData:
    """A run from (problem id, level, samples): samples None for a missing solution, else a
    list of (status, eager speedup), (status, eager speedup, style rule flagged) or "pending" for
    a sample not evaluated yet."""
    problems, samples, evaluations = [], [], []
    for position, (problem_id, level, outcomes) in enumerate(spec):
        sha = f"{problem_id}-content"
        problems.append(ProblemRecord(problem_id, position, level, problem_id, f"/p/{problem_id}.py", sha, ""))
        if outcomes is None:
            evaluations.append(EvaluationRecord(problem_id, 0, "missing", False, "no solution"))
            continue
        for index, outcome in enumerate(outcomes):
            samples.append(SampleRecord(problem_id, index, f"{index}.py", f"/s/{index}.py", "x", ""))
            if outcome != "pending":
                status, speedup, *flags = outcome
                verdict = make_verdict(problem_id, status, speedup, tuple(flags))
                evaluations.append(EvaluationRecord.from_verdict(verdict, problem_id, index))
    sessions = [SessionRecord(1, "", Manifest(config=config()))]
    return RunData(RunRecord(name, "", config()), sessions, problems, samples, evaluations)
