"""Hand-made runs of the repository track for the tests of its scores, comparison, report and
export: verdicts constructed with track "repo", nothing judged."""

from __future__ import annotations

from run_fixtures import config

from kbench.core.verdict import Verdict
from kbench.runs.manifest import Manifest
from kbench.runs.records import EvaluationRecord, ProblemRecord, RunData, RunRecord, SampleRecord, SessionRecord
from kbench.runs.store import Store


def repo_verdict(task_id: str, status: str, speedup: float | None = None, low: float | None = None,
                 expert: float | None = 1.5, device: str = "cuda:0") -> Verdict:
    """A patch's verdict: for a correct one its speedup over base and the interval's lower bound
    (the upper bound as far above the speedup); the task's expert speedup in every verdict, and for a
    correct one its fraction of it, with the interval the speedup's over the expert's."""
    correct = status == "correct"
    timed = correct and speedup is not None
    fraction = {"fraction": speedup / expert,
                "fraction_interval": [low / expert, (2 * speedup - low) / expert] if low is not None else None,
                } if timed and expert is not None else {}
    return Verdict(
        problem=task_id,
        problem_path=f"/tasks/{task_id}/task.toml",
        problem_sha256="0" * 64,
        solution_path=None,
        solution_sha256="1" * 64,
        device=device,
        size="small" if device == "cpu" else "default",
        status=status,
        correct=correct,
        reason=f"made by hand: {status}",
        runtime_ms=1.0 / speedup if timed else None,
        baselines={"base": {"runtime_ms": 1.0 if timed else None}},
        speedup={"base": speedup if timed else None},
        speedup_interval={"base": [low, 2 * speedup - low]} if timed and low is not None else {},
        track="repo",
        expert={"speedup": expert, "fraction": None, **fraction, "measured": "by hand"} if expert is not None else {},
    )


def repo_config(**changes):
    """A run on a GPU by default (on a CPU no task is solved or unsolved: kbench.runs.repo_score)."""
    return config(**{"selection": ("all",), "baselines": ("base",), "track": "repo", "device": "cuda:0",
                     "size": "default", **changes})


def repo_run(spec: list[tuple[str, list | None]], name: str = "repo", **changes) -> RunData:
    """A run from (task id, samples): None for a task without a patch, else a list of
    (status, speedup, low, expert), fewer fields taking repo_verdict's defaults, or "pending"."""
    cfg = repo_config(**changes)
    problems, samples, evaluations = [], [], []
    for position, (task_id, patches) in enumerate(spec):
        problems.append(ProblemRecord(task_id, position, None, task_id, f"/tasks/{task_id}/task.toml",
                                      f"{task_id}-content", "id = ...\n"))
        if patches is None:
            evaluations.append(EvaluationRecord(task_id, 0, "missing", False, "no patch"))
            continue
        for index, patch in enumerate(patches):
            samples.append(SampleRecord(task_id, index, f"{task_id}.patch", f"/p/{task_id}.patch", f"sha-{index}",
                                        "--- a/x\n+++ b/x\n"))
            if patch != "pending":
                verdict = repo_verdict(task_id, *patch, device=cfg.device)
                evaluations.append(EvaluationRecord.from_verdict(verdict, task_id, index))
    pins = {task_id: {"sha256": f"{task_id}-content", "commit": "c" * 40} for task_id, _ in spec}
    sessions = [SessionRecord(1, "", Manifest(config=cfg, tasks=pins))]
    return RunData(RunRecord(name, "2026-12-02T10:00:00+00:00", cfg), sessions, problems, samples, evaluations)


def save(store: Store, data: RunData) -> None:
    store.create_run(data.run, data.problems, data.samples, data.sessions[0].manifest)
    for evaluation in data.evaluations:
        store.record(data.run.name, evaluation)
