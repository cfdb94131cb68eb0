"""Runs of the repository track: tasks (kbench.repo) selected, patches planned, each judged by
``kbench.repo.evaluate_patch`` and stored as a run of problems is (docs/repo-runs.md).

A run is of one track (``RunConfig.track``). A repository run stores its tasks where a
kernel run stores its problems (the task id, its hash, its task file's path and text),
each sample's patch as the sample's source, and its verdicts, prompts and replies as for
problems; ``runs.runner`` plans, resumes and stores it with the same code, calling back
here for what differs: the task records, the manifest's pins (each task's hash and
pinned revision) and the judging of a patch.

The replay source (``--solutions DIR``) takes, for the task ``<repository>/<task>``:
``DIR/<repository>/<task>.patch``, then every ``DIR/<repository>/<task>/*.patch``, one
sample each. A task with none is ``missing``, a failure like any other.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

from kbench.judge.confirmation import Unconfirmed
from kbench.judge.guard import DEFAULT_POLICY, check_policy
from kbench.repo.patch import Patch, PatchFileError
from kbench.repo.task import Task, TaskError, find_task, suite_tasks
from kbench.runs.manifest import RunConfig, now, sha256_lines
from kbench.runs.records import EvaluationRecord, ProblemRecord, SampleRecord

TRACK = "repo"
BASELINES = ("base",)  # the track's one speedup column: the base revision
ALL = "all"
PATCH_SUFFIX = ".patch"

EvaluatePatch = Callable[..., Any]


class RepoRunError(Exception):
    """A repository run that cannot start as asked (a bad selection or patch directory)."""


def select_tasks(selection: Sequence[str]) -> list[Task]:
    """Tasks named by a selection: items (comma-separated or repeated) that are ``all`` (the bundled
    suite), a bundled task id (``tinylm/fused-rmsnorm``), or a task file or its folder."""
    items = [part.strip() for entry in selection for part in entry.split(",") if part.strip()]
    chosen: dict[str, Task] = {}
    for item in items:
        try:
            found = suite_tasks() if item == ALL else [find_task(item)]
        except TaskError as exc:
            raise RepoRunError(str(exc)) from exc
        if item == ALL and not found:
            raise RepoRunError("the bundled suite holds no tasks")
        for task in found:
            earlier = chosen.setdefault(task.id, task)
            if earlier.sha256 != task.sha256:
                raise RepoRunError(f"two different task files have the id {task.id!r}: {earlier.path}, {task.path}")
    if not chosen:
        raise RepoRunError("the selection names no tasks")
    return list(chosen.values())


def normalise_selection(selection: Sequence[str]) -> tuple[str, ...]:
    """Items split at commas, and paths made absolute, so a run resumes from any directory."""
    items = (part.strip() for entry in selection for part in entry.split(","))
    return tuple(str(Path(item).resolve()) if Path(item).exists() else item for item in items if item)


def patch_files(task: Task, directory: Path) -> list[Path]:
    """The patch files the replay source holds for ``task``, in sample order."""
    single = directory / f"{task.id}{PATCH_SUFFIX}"
    files = [single] if single.is_file() else []
    if (directory / task.id).is_dir():
        files += sorted(p for p in (directory / task.id).glob(f"*{PATCH_SUFFIX}") if p.is_file())
    return files


def plan_patches(tasks: list[Task], directory: Path) -> tuple[list[SampleRecord], tuple[str, ...]]:
    """The samples the patch files under ``directory`` make, and the files no task claimed."""
    if not directory.is_dir():
        raise RepoRunError(f"patch directory {directory} does not exist")
    samples = []
    for task in tasks:
        for index, path in enumerate(patch_files(task, directory)):
            try:
                patch = Patch.from_file(path)
            except PatchFileError as exc:
                raise RepoRunError(str(exc)) from exc
            samples.append(SampleRecord(task.id, index, path.relative_to(directory).as_posix(), str(path.resolve()),
                                        patch.sha256, patch.text))
    claimed = {s.name for s in samples}
    present = {p.relative_to(directory).as_posix() for p in directory.rglob(f"*{PATCH_SUFFIX}")}
    return samples, tuple(sorted(present - claimed))


def repo_config(tasks: list[Task], planned: list[SampleRecord], *, selection: Sequence[str], solutions: str,
                source: str = "replay", policy: str = DEFAULT_POLICY, **fields: Any) -> RunConfig:
    """A repository run's config: the track, its one column, and hashes over the tasks (their own
    hash and pinned revision) and, for a replay, the patches."""
    solutions_sha256 = "" if source != "replay" else sha256_lines(
        [f"{s.problem_id}\0{s.index}\0{s.name}\0{s.sha256}" for s in planned])
    return RunConfig(
        selection=normalise_selection(selection),
        solutions=solutions,
        baselines=BASELINES,
        policy=check_policy(policy),
        suite_sha256=sha256_lines([f"{t.id}\0{t.sha256}" for t in tasks]),  # a task's hash covers its revision
        solutions_sha256=solutions_sha256,
        source=source,
        track=TRACK,
        **fields,
    )


def task_record(task: Task, position: int) -> ProblemRecord:
    """A task as the store's ``problems`` table holds it: its id, title, task file, hash and text."""
    try:
        text = task.path.read_text()
    except OSError:
        text = ""
    return ProblemRecord(problem_id=task.id, position=position, level=None, name=task.title, path=str(task.path),
                         sha256=task.sha256, source=text)


def task_pins(tasks: Sequence[Task]) -> dict[str, dict[str, Any]]:
    """What the manifest records of each task: its hash, pinned revision and where the repository is."""
    return {t.id: {"sha256": t.sha256, "commit": t.repository.commit, "repository": str(t.repository.source)}
            for t in tasks}


def judge_patch(evaluate: EvaluatePatch, config: RunConfig, task: Task, sample: SampleRecord,
                session: int) -> EvaluationRecord:
    """One patch's verdict as a record; a failure that is not the patch's is recorded as such, to be retried."""
    started = now()
    try:
        verdict = evaluate(task, Patch(sample.source, Path(sample.origin) if sample.origin else None), config.device,
                           size=config.size, trials=config.trials, timeout=config.timeout, policy=config.policy,
                           sandbox=config.sandbox,  # every test, hidden ones included; the expert timed beside
                           **({} if config.measure_time else {"measure_time": False}))  # kbench run --no-timing
    except TaskError as exc:
        status, reason = "problem_error", str(exc)
    except Unconfirmed as exc:  # the machine too noisy for a verdict: retried on resume
        status, reason = "infra_error", f"no verdict: {exc}"
    except Exception:  # noqa: BLE001 - a fault of the harness must not end the run
        status, reason = "infra_error", traceback.format_exc(limit=20)
    else:
        return EvaluationRecord.from_verdict(verdict, task.id, sample.index, session=session, started_at=started,
                                             finished_at=now())
    return EvaluationRecord(task.id, sample.index, status, False, reason, session=session, started_at=started,
                            finished_at=now())
