"""Runs: every problem of a selection judged against the solutions a source provides.

The replay source reads solutions that already exist as files; sources that
ask models for them (kbench.agents.loop) plan their samples with ``plan_generated``
and share ``open_run`` and ``judge_sample``. For a problem file ``<stem>.py``
the replay source takes, in this order:

- ``DIR/<stem>.py``;
- every ``DIR/<stem>/*.py``, one sample each;
- KernelBench run files ``DIR/level_<L>_problem_<P>_sample_<S>_kernel.py``, for a
  problem of level ``L`` whose file name starts with ``<P>_`` (KernelBench's
  ``level1/19_ReLU.py`` is problem 19 of level 1).

A problem with none is recorded as ``missing``, a failure like any other.
``execute`` commits each verdict as soon as it is known and, given the name of
a run that exists, skips what it already holds: a killed run is resumed by
running the same command again.
"""

from __future__ import annotations

import os
import re
import stat
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol, Sequence

from kbench import judge
from kbench.core.solution import Solution
from kbench.core.verdict import Verdict
from kbench.judge.trusted.baselines import check_columns
from kbench.judge.trusted.compare import DEFAULT_CRITERION, check_criterion
from kbench.judge.confirmation import Unconfirmed
from kbench.judge.guard import DEFAULT_POLICY, check_policy
from kbench.runs import repo_runner
from kbench.runs.manifest import Manifest, RunConfig, capture, now, sha256_lines
from kbench.runs.records import RETRIED_STATUSES, EvaluationRecord, ProblemRecord, RunRecord, SampleRecord
from kbench.runs.repo_runner import TRACK as REPO_TRACK
from kbench.runs.store import Store
from kbench.suite import find_problem, kernelbench, suite_problems
from kbench.suite.problem import Problem, ProblemError, load_problem, missing_requirements

# The baseline columns of a run that names none (kbench.judge.trusted.baselines), by device type. On a
# GPU the published figure is fast_p over default torch.compile, so that column is measured too
# (a compilation per problem, kept in the baseline cache: `kbench baseline` measures them ahead);
# on a CPU a compiled column says nothing about GPU kernels and costs a C++ build per problem.
DEFAULT_BASELINES = {"cuda": ("eager", "compile"), "cpu": ("eager",)}


def default_baselines(device: str) -> tuple[str, ...]:
    return DEFAULT_BASELINES["cuda" if device.startswith("cuda") else "cpu"]
KERNELBENCH_SAMPLE = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py")
LEVEL_SELECTION = re.compile(r"level(\d+)")

Evaluate = Callable[..., Verdict]


class RunError(Exception):
    """A run that cannot start as asked: a bad selection or source, or a resumption
    with settings other than the run's own."""


class Listener(Protocol):
    """Told about progress (a progress bar, a log). It may also have
    ``evaluating(problem_id, sample_index, turn)``, told as each judging starts
    (``tell_evaluating``), and ``turn_finished(record)`` (kbench.agents.loop)."""

    def started(self, total: int, done: list[EvaluationRecord]) -> None: ...

    def finished(self, record: EvaluationRecord) -> None: ...


def tell_evaluating(listener: Listener | None, problem_id: str, sample_index: int, turn: int | None = None) -> None:
    """Tell a listener that has ``evaluating`` which sample the judge takes up now
    (a progress bar shows it: one evaluation can take minutes)."""
    if evaluating := getattr(listener, "evaluating", None):
        evaluating(problem_id, sample_index, turn)


@dataclass(frozen=True)
class Plan:
    """The problems of a run, in order, the samples found for them, the source's files
    that no problem claimed (often a misnamed solution, which would count as missing),
    and the entries named as solutions that cannot be read as files (a broken link)."""

    problems: list[Problem]
    samples: list[SampleRecord]
    unclaimed: tuple[str, ...] = ()
    # Entries named as a problem's solutions that are no readable file, by problem: {name: what is wrong}.
    faults: dict[str, dict[str, str]] = field(default_factory=dict)

    def samples_of(self, problem_id: str) -> list[SampleRecord]:
        return [s for s in self.samples if s.problem_id == problem_id]


def natural_key(text: str) -> list[int | str]:
    """Sort ``2_x`` before ``10_x``, as KernelBench numbers its problems."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def normalise_selection(selection: Sequence[str]) -> tuple[str, ...]:
    """Items split at commas, and paths made absolute (KernelBench's ``DIR/level1/19`` too), so
    a run resumes from any directory."""
    items = (part.strip() for entry in selection for part in entry.split(","))
    return tuple(_absolute(item) for item in items if item)


def _absolute(item: str) -> str:
    path = Path(item)
    if path.exists():
        return str(path.resolve())
    if kernelbench.find_file(item):
        return str(path.parent.resolve() / path.name)
    return item


def select_problems(selection: Sequence[str]) -> list[Problem]:
    """Problems named by a selection: items (comma-separated or repeated) that are each a
    level of the bundled suite (``level1``), a suite id or problem file, a directory of
    problem files, a folder of KernelBench's level folders (every level), or KernelBench's
    numbers in one (``DIR/level1/19``, ``DIR/level_1_problem_19``). A path that exists
    wins over a level of the same name."""
    chosen: dict[str, Problem] = {}
    for item in normalise_selection(selection):
        path = Path(item)
        level = LEVEL_SELECTION.fullmatch(item)
        if path.is_dir():
            folders = [path] if any(path.glob("*.py")) else kernelbench.level_folders(path)
            files = [f for folder in folders for f in sorted(folder.glob("*.py"), key=lambda p: natural_key(p.name))]
            if not files:
                raise RunError(f"problem directory {path} holds no .py files (nor level folders of them)")
            found = [load_problem(f, problem_id=f"{f.parent.resolve().name}/{f.stem}") for f in files]
        elif level and not path.exists():
            found = suite_problems(int(level.group(1)))
            if not found:
                raise RunError(f"the bundled suite has no problems in {item}")
        else:
            found = [find_problem(item)]
        for problem in found:
            earlier = chosen.setdefault(problem.id, problem)
            if earlier.sha256 != problem.sha256:
                raise RunError(f"two different problem files have the id {problem.id!r}: {earlier.path}, {problem.path}")
    if not chosen:
        raise RunError("the selection names no problems")
    return list(chosen.values())


def runnable(problems: list[Problem], dtype: str = "float32") -> tuple[list[Problem], dict[str, str]]:
    """The problems this Python can run in ``dtype``, and why each other one is
    skipped (a module it requires is missing, or it has no variant in that
    dtype): they are left out of the run, not failed."""
    keep, skipped = [], {}
    for problem in problems:
        missing = missing_requirements(problem)
        if missing:
            skipped[problem.id] = f"needs {', '.join(missing)}"
        elif dtype not in problem.dtypes:
            skipped[problem.id] = f"no {dtype} variant"
        else:
            keep.append(problem)
    if not keep:
        raise RunError(f"every selected problem is skipped: {'; '.join(f'{k}: {v}' for k, v in skipped.items())}")
    return keep, skipped


def replay_files(problem: Problem, directory: Path) -> list[Path]:
    """The solution files the replay source holds for ``problem``, in sample order."""
    return [path for path in _replay_entries(problem, directory) if entry_fault(path) is None]


def _replay_entries(problem: Problem, directory: Path) -> list[Path]:
    """Every entry of the directory named as a solution of ``problem``, readable or not."""
    stem = problem.path.stem
    own = directory / f"{stem}.py"
    files = [own] if own.exists() or own.is_symlink() else []
    if (directory / stem).is_dir():
        files += sorted((directory / stem).glob("*.py"), key=lambda p: natural_key(p.name))
    number = re.match(r"(\d+)_", stem)
    if number and problem.level is not None:
        pattern = f"level_{problem.level}_problem_{int(number.group(1))}_sample_*_kernel.py"
        kernelbench = [p for p in directory.glob(pattern) if KERNELBENCH_SAMPLE.fullmatch(p.name)]
        files += sorted(kernelbench, key=lambda p: int(KERNELBENCH_SAMPLE.fullmatch(p.name).group(3)))
    return files


def entry_fault(path: Path) -> str | None:
    """Why an entry named as a solution cannot be read as one (a broken link, a directory,
    a FIFO that would block the reader...), or None for a regular file (linked or not)."""
    if path.is_symlink() and not path.exists():
        return f"a broken symbolic link (to {os.readlink(path)})"
    if path.is_dir():
        return "a directory, not a file"
    if path.exists() and not path.is_file():
        mode = path.stat().st_mode
        kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"))
        return "not a regular file: " + next((kind for test, kind in kinds if test(mode)), "of an unknown kind")
    return None


def plan_replay(problems: list[Problem], directory: Path) -> Plan:
    if not directory.is_dir():
        raise RunError(f"solutions directory {directory} does not exist")
    stems: dict[str, str] = {}
    for problem in problems:
        other = stems.setdefault(problem.path.stem, problem.id)
        if other != problem.id:
            raise RunError(
                f"problems {other} and {problem.id} share the file name {problem.path.stem!r}, so a "
                "solutions directory cannot tell them apart: run them separately"
            )
    samples = []
    faults: dict[str, dict[str, str]] = {}
    for problem in problems:
        for path in _replay_entries(problem, directory):
            if (fault := entry_fault(path)) is not None:
                faults.setdefault(problem.id, {})[path.relative_to(directory).as_posix()] = fault
        for index, path in enumerate(replay_files(problem, directory)):
            solution = Solution.from_file(path)
            samples.append(
                SampleRecord(
                    problem_id=problem.id,
                    index=index,
                    name=path.relative_to(directory).as_posix(),
                    origin=str(path.resolve()),
                    sha256=solution.sha256,
                    source=solution.source,
                )
            )
    claimed = {s.name for s in samples} | {name for named in faults.values() for name in named}
    unclaimed = (
        p.relative_to(directory).as_posix() for p in [*directory.glob("*.py"), *directory.glob("*/*.py")]
    )
    return Plan(problems=problems, samples=samples, unclaimed=tuple(sorted(set(unclaimed) - claimed)), faults=faults)


def plan_generated(problems: list[Problem], samples: int, origin: str) -> Plan:
    """``samples`` samples of each problem, to be asked of a model (``origin``: PROVIDER/MODEL).
    Their sources are empty until a sample is finished (Store.finish_sample)."""
    if samples < 1:
        raise RunError(f"--samples {samples}: at least 1")
    return Plan(
        problems=problems,
        samples=[
            SampleRecord(problem_id=p.id, index=i, name=f"sample_{i}", origin=origin, sha256="", source="")
            for p in problems
            for i in range(samples)
        ],
    )


def _check_baselines(baselines: Sequence[str]) -> None:
    try:
        check_columns(list(baselines))
    except ValueError as exc:
        raise RunError(str(exc)) from exc


def generated_config(
    plan: Plan,
    *,
    selection: Sequence[str],
    model: str,
    source: str,
    samples: int,
    turns: int,
    generation: dict,
    device: str,
    size: str,
    trials: int,
    timeout: float,
    baselines: Sequence[str] | None = None,
    policy: str = DEFAULT_POLICY,
    cuda_graph: bool = False,
    sandbox: bool = True,
    dtype: str = "float32",
    limit: int | None = None,
    precision: str | None = None,
    pairs: int = 1,
    max_pairs: int = 0,
    decide_at: Sequence[float] = (),
    measure_time: bool = True,
    correctness: str = DEFAULT_CRITERION,
) -> RunConfig:
    """The config of a run whose solutions a model writes (``model``: PROVIDER/MODEL;
    ``generation``: kbench.agents.loop's settings, plain JSON values)."""
    config = _config(
        plan, selection, model, "", device=device, size=size, trials=trials, timeout=timeout, baselines=baselines,
        policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype, source=source, samples=samples, turns=turns,
        generation=generation, limit=limit, precision=precision, pairs=pairs, max_pairs=max_pairs,
        decide_at=tuple(decide_at), measure_time=measure_time, correctness=correctness,
    )
    if turns < 1:
        raise RunError(f"--turns {turns}: at least 1")
    return config


def run_config(
    plan: Plan,
    *,
    selection: Sequence[str],
    solutions: Path,
    device: str,
    size: str,
    trials: int,
    timeout: float,
    baselines: Sequence[str] | None = None,
    policy: str = DEFAULT_POLICY,
    cuda_graph: bool = False,
    sandbox: bool = True,
    dtype: str = "float32",
    limit: int | None = None,
    precision: str | None = None,
    pairs: int = 1,
    max_pairs: int = 0,
    decide_at: Sequence[float] = (),
    measure_time: bool = True,
    correctness: str = DEFAULT_CRITERION,
) -> RunConfig:
    """The config of a run that replays the solution files under ``solutions``."""
    solutions_sha256 = sha256_lines([f"{s.problem_id}\0{s.index}\0{s.name}\0{s.sha256}" for s in plan.samples])
    return _config(
        plan, selection, str(solutions.resolve()), solutions_sha256, device=device, size=size, trials=trials,
        timeout=timeout, baselines=baselines, policy=policy, cuda_graph=cuda_graph, sandbox=sandbox, dtype=dtype,
        limit=limit, precision=precision, pairs=pairs, max_pairs=max_pairs, decide_at=tuple(decide_at),
        measure_time=measure_time, correctness=correctness,
    )


def _config(
    plan: Plan, selection: Sequence[str], solutions: str, solutions_sha256: str, *,
    baselines: Sequence[str] | None, policy: str, **fields: Any,
) -> RunConfig:
    """What every run's config holds, checked, plus its source's own ``fields``."""
    baselines = baselines or default_baselines(fields["device"])
    _check_baselines(baselines)
    check_criterion(fields.get("correctness", DEFAULT_CRITERION))
    return RunConfig(
        selection=normalise_selection(selection),
        solutions=solutions,
        baselines=tuple(baselines),
        policy=check_policy(policy),
        suite_sha256=sha256_lines([f"{p.id}\0{p.sha256}" for p in plan.problems]),
        solutions_sha256=solutions_sha256,
        **fields,
    )


def execute(
    store: Store,
    name: str,
    config: RunConfig,
    plan: Plan,
    *,
    evaluate: Evaluate = judge.evaluate,
    listener: Listener | None = None,
    manifest: Manifest | None = None,
    devices: Sequence[str] = (),
    build_jobs: int = 0,
    executor: judge.Executor | None = None,
) -> list[EvaluationRecord]:
    """Evaluate what run ``name`` has not finished (all of it, for a new run); the
    records made in this session. Raises RunError when the run exists with
    another config; KeyboardInterrupt leaves every finished verdict stored.
    With an ``executor`` (``judge.RayExecutor``, say), ``devices`` (several GPUs: a
    ``judge.LocalExecutor`` on them, with ``build_jobs`` threads building ahead) or a
    GPU run (a ``LocalExecutor`` on its GPU, each evaluation's workers started during
    the one before), evaluations run in executor threads and this thread stores each
    verdict as it comes; the session's manifest records how (``Manifest.executor``)."""
    if executor is None and (devices or build_jobs or config.device.startswith("cuda")):
        executor = judge.LocalExecutor(devices or [config.device], build_jobs, ahead=None if config.sandbox else False)
    session = open_run(store, name, config, plan, manifest, executor.describe() if executor else None)
    finished = {
        (e.problem_id, e.sample_index): e for e in store.evaluations(name) if e.status not in RETRIED_STATUSES
    }
    made: list[EvaluationRecord] = []
    for problem in plan.problems:
        if not plan.samples_of(problem.id) and (problem.id, 0) not in finished:
            named = problem.id if config.track == REPO_TRACK else problem.path.stem
            reason = f"no solution for {named} in {config.solutions}" + "".join(
                f"; {name} is {fault}" for name, fault in plan.faults.get(problem.id, {}).items())
            record = EvaluationRecord(problem.id, 0, "missing", False, reason, session=session,
                                      started_at=now(), finished_at=now())
            store.record(name, record)
            finished[(problem.id, 0)] = record
            made.append(record)
    todo = [(p, s) for p in plan.problems for s in plan.samples_of(p.id) if (p.id, s.index) not in finished]
    if listener:
        listener.started(len(finished) + len(todo), list(finished.values()))
    for record in judge_each(todo, evaluate, config, session, listener, executor):
        store.record(name, record)
        made.append(record)
        if listener:
            listener.finished(record)
    return made


def judge_each(todo: list[tuple[Problem, SampleRecord]], evaluate: Evaluate, config: RunConfig, session: int,
            listener: Listener | None, executor: judge.Executor | None) -> Iterator[EvaluationRecord]:
    """Each sample's record as it is judged: in turn here, or by the executor, side by
    side (in Ray's workers, for a RayExecutor: what the jobs hold travels with them)."""
    if executor is None:
        for problem, sample in todo:
            tell_evaluating(listener, problem.id, sample.index)
            yield judge_sample(evaluate, config, problem, sample, session)
        return

    def judge_on(job: tuple[Problem, SampleRecord], device: str) -> EvaluationRecord:
        return judge_sample(evaluate, replace(config, device=device), job[0], job[1], session)

    def build_ahead(job: tuple[Problem, SampleRecord], device: str) -> None:
        judge.build(Solution(source=job[1].source, path=Path(job[1].origin)), device, sandbox=config.sandbox,
                    problem=job[0], size=config.size, dtype=config.dtype)

    def worth_building(job: tuple[Problem, SampleRecord]) -> bool:
        return judge.needs_build(job[1].source)

    for _, record in executor.map(todo, judge_on, build_ahead, worth_building):
        yield record


def open_run(store: Store, name: str, config: RunConfig, plan: Plan, manifest: Manifest | None = None,
             executor: dict[str, Any] | None = None) -> int:
    """Create run ``name`` or start a new session of it; the session's number. Raises
    RunError when the run exists with another config. ``executor``: how this session
    judges (``judge.Executor.describe``), for the manifest captured here."""
    existing = store.run(name)
    if existing is not None and (differences := existing.config.differences(config)):
        described = "; ".join(_describe_change(key, old, new) for key, (old, new) in differences.items())
        raise RunError(f"run {name!r} exists with other settings ({described}); choose a new run name")
    manifest = manifest or capture(config, executor=executor)
    record = _problem_record
    if config.track == REPO_TRACK:  # tasks where problems are, and each task's hash and revision pinned
        manifest, record = replace(manifest, tasks=repo_runner.task_pins(plan.problems)), repo_runner.task_record
    if existing is None:
        problems = [record(problem, position) for position, problem in enumerate(plan.problems)]
        store.create_run(RunRecord(name, now(), config), problems, plan.samples, manifest)
        return 1
    return store.add_session(name, manifest)


def judge_sample(evaluate: Evaluate, config: RunConfig, problem: Problem, sample: SampleRecord, session: int) -> EvaluationRecord:
    """One verdict as a record; a failure that is not the candidate's is recorded as such, to be retried."""
    if config.track == REPO_TRACK:
        return repo_runner.judge_patch(evaluate, config, problem, sample, session)
    started = now()
    solution = Solution(source=sample.source, path=Path(sample.origin))
    try:
        verdict = evaluate(
            problem, solution, config.device, size=config.size, trials=config.trials, timeout=config.timeout,
            policy=config.policy, baselines=config.baselines, timing=config.timing_settings(),
            sandbox=config.sandbox, dtype=config.dtype, **untimed(config),
        )
    except ProblemError as exc:
        status, reason = "problem_error", str(exc)
    except Unconfirmed as exc:  # the machine too noisy for a verdict: retried on resume
        status, reason = "infra_error", f"no verdict: {exc}"
    except Exception:  # noqa: BLE001 - a fault of the harness must not end the run
        status, reason = "infra_error", traceback.format_exc(limit=20)
    else:
        return EvaluationRecord.from_verdict(
            verdict, problem.id, sample.index, session=session, started_at=started, finished_at=now()
        )
    return EvaluationRecord(
        problem.id, sample.index, status, False, reason, session=session, started_at=started, finished_at=now()
    )


def untimed(config: RunConfig) -> dict[str, Any]:
    """The options a run sets away from the judge's defaults: ``measure_time=False`` (--no-timing) and
    ``correctness`` (--correctness kernelbench), else nothing: a judge stand-in that times everything by the
    default criterion (the tests' fakes) need not know the options."""
    return {**({} if config.measure_time else {"measure_time": False}),
            **({} if config.correctness == DEFAULT_CRITERION else {"correctness": config.correctness})}


def _describe_change(key: str, old: object, new: object) -> str:
    if key == "suite_sha256":
        return "the problem files differ from the run's"
    if key == "solutions_sha256":
        return "the solution files differ from the run's"
    if key == "generation" and isinstance(old, dict) and isinstance(new, dict):
        changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        return "; ".join(f"{k}: stored {old.get(k)!r}, now {new.get(k)!r}" for k in changed)
    return f"{key}: stored {old!r}, now {new!r}"


def _problem_record(problem: Problem, position: int) -> ProblemRecord:
    return ProblemRecord(
        problem_id=problem.id,
        position=position,
        level=problem.level,
        name=problem.name,
        path=str(problem.path),
        sha256=problem.sha256,
        source=problem.source,
    )
