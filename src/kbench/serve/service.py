"""The reward service's engine: accepted jobs from the store to the devices and back, one evaluation
per device at a time.

``Service.submit`` commits a request's jobs to the job store (kbench.serve.jobs) and only then hands
back their ids; a scheduler thread claims the oldest queued job whenever a device is free and hands
it to the executor's slots (``LocalSlots``: a thread per local device, kbench.judge's
``DeviceThreads``; ``MapSlots``: any executor's ``map``, one job at a time per slot, for Ray), and
commits each outcome with its reward as it comes back. The queue is the store: nothing waits in
memory that a kill would lose, and a bounded number of jobs not yet done (``max_pending``) answers
"busy" beyond it. A failure that is not the candidate's (a lost worker, a harness fault, a problem
whose reference fails) ends the job as ``infra_error``/``problem_error``, whose reward is None.
"""

from __future__ import annotations

import functools
import hashlib
import json
import queue
import sys
import threading
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from kbench import judge
from kbench.core.solution import Solution
from kbench.rewards import failure_reward, reward_of
from kbench.rewards.reward import kbench_version
from kbench.serve.jobs import Busy, Job, JobStore
from kbench.serve.payload import INLINE_PREFIX, Limits, parse_jobs
from kbench.suite import find_problem, suite_problems
from kbench.suite.problem import Problem, ProblemError, load_problem

MAX_ATTEMPTS = 3  # a job the service died judging this many times ends as an infra_error
POLL_SECONDS = 0.2
MAX_WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class JudgeSettings:
    """How every job is judged (the service's, not the request's: a client chooses the reward, never the
    judge's settings). ``baselines``: the columns timed, where ``measure_time``."""

    size: str = "auto"
    trials: int = judge.DEFAULT_TRIALS
    timeout: float = judge.DEFAULT_TIMEOUT
    policy: str = "lenient"
    baselines: tuple[str, ...] = ("eager",)
    measure_time: bool = True
    sandbox: bool = True

    def options(self) -> dict[str, Any]:
        """``evaluate``'s keyword arguments."""
        return {"size": self.size, "trials": self.trials, "timeout": self.timeout, "policy": self.policy,
                "baselines": self.baselines, "measure_time": self.measure_time, "sandbox": self.sandbox}

    @property
    def timed_baselines(self) -> tuple[str, ...]:
        return self.baselines if self.measure_time else ()


@dataclass(frozen=True)
class Task:
    """What a slot runs: picklable (a Ray task receives it), with the problem read and the source held."""

    job_id: str
    problem: Problem
    source: str
    options: dict[str, Any]


@dataclass(frozen=True)
class Outcome:
    """How a task ended: the verdict's status and JSON, or a status of the run's (infra_error, problem_error) and why."""

    job_id: str
    status: str
    verdict_json: str | None = None
    reason: str = ""
    device: str = ""
    seconds: float = 0.0


def judge_task(task: Task, device: str, evaluate: Callable[..., Any] = judge.evaluate) -> Outcome:
    """Judge one task on ``device``; whatever goes wrong outside the candidate ends as an outcome, not an exception."""
    started = time.monotonic()
    try:
        verdict = evaluate(task.problem, Solution(source=task.source), device, **task.options)
    except ProblemError as exc:
        return Outcome(task.job_id, "problem_error", reason=str(exc), device=device, seconds=time.monotonic() - started)
    except Exception:  # noqa: BLE001 - a fault of the harness or the machine (or a verdict noise would not let the
        # judge give: kbench.judge's Unconfirmed) ends this job as an infrastructure failure, not the service
        return Outcome(task.job_id, "infra_error", reason=traceback.format_exc(limit=8), device=device,
                       seconds=time.monotonic() - started)
    return Outcome(task.job_id, verdict.status, verdict.to_json(), device=device, seconds=time.monotonic() - started)


class LocalSlots:
    """This machine's devices: a thread each (kbench.judge.DeviceThreads), one job at a time on each."""

    def __init__(self, devices: Sequence[str], run: Callable[[Task, str], Outcome], results: queue.Queue,
                 ahead: bool = False):
        self.threads = judge.DeviceThreads(devices, ahead, run, results)
        self.described = {"kind": "local", "devices": list(devices), "ahead": ahead}

    @property
    def idle(self) -> int:
        return self.threads.idle

    def submit(self, task: Task) -> None:
        self.threads.submit(task)

    def received(self, result: Any) -> Outcome:
        return self.threads.received(result)

    def close(self) -> None:
        self.threads.close()


class MapSlots:
    """Any executor (kbench.judge.Executor: Ray's) with ``count`` jobs in flight, each one ``map`` call."""

    def __init__(self, executor: judge.Executor, count: int, run: Callable[[Task, str], Outcome], results: queue.Queue):
        self.executor, self.count, self.run, self.results = executor, count, run, results
        self.in_flight = 0
        self._lock = threading.Lock()
        self.described = executor.describe() | {"slots": count}

    @property
    def idle(self) -> int:
        return max(0, self.count - self.in_flight)

    def submit(self, task: Task) -> None:
        with self._lock:
            self.in_flight += 1
        threading.Thread(target=self._one, args=(task,), daemon=True, name=f"kbench-serve-{task.job_id[:8]}").start()

    def _one(self, task: Task) -> None:
        try:
            result: Any = next(iter(self.executor.map([task], self.run)))[1]
        except BaseException as exc:  # noqa: BLE001 - handed to the scheduler, which records it
            result = exc
        self.results.put((task, result))

    def received(self, result: Any) -> Outcome:
        with self._lock:
            self.in_flight -= 1
        if isinstance(result, BaseException):
            raise result
        return result

    def close(self) -> None:
        pass


class Service:
    """Accepts jobs (``submit``), judges them (``start``: the scheduler thread) and answers for them (``job``,
    ``wait``). ``slots``: a callable making the slots from the run function and the results queue, so that
    tests can give a stand-in ``evaluate`` and any executor."""

    def __init__(self, jobs: JobStore, settings: JudgeSettings, make_slots: Callable[[Callable, queue.Queue], Any],
                 data_dir: Path, *, limits: Limits = Limits(), max_pending: int = 256,
                 evaluate: Callable[..., Any] = judge.evaluate, problems: Collection[str] | None = None):
        self.jobs, self.settings, self.limits, self.max_pending = jobs, settings, limits, max_pending
        self.data_dir = Path(data_dir)
        self.problems = frozenset(problems if problems is not None else (p.id for p in suite_problems()))
        self.results: queue.Queue = queue.Queue()
        self.slots = make_slots(functools.partial(judge_task, evaluate=evaluate), self.results)
        self.done = threading.Condition()
        self.in_flight: dict[str, Job] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.started_at = time.time()
        self.evaluated = 0

    # --- the API's side ----------------------------------------------------
    def submit(self, raw: bytes) -> tuple[list[str], bool]:
        """Check a request body and commit its jobs; their ids (committed) and whether it was a batch.
        PayloadError for a bad request, Busy where the queue is full: then nothing is stored."""
        new, batch = parse_jobs(raw, self.limits, self.problems, self.settings.timed_baselines)
        ids = self.jobs.add(new, self.max_pending)
        return ids, batch

    def job(self, job_id: str) -> Job | None:
        return self.jobs.get(job_id)

    def wait(self, job_id: str, seconds: float) -> Job | None:
        """The job once done, or as it is after ``seconds`` (at most ``MAX_WAIT_SECONDS``)."""
        deadline = time.monotonic() + min(max(seconds, 0.0), MAX_WAIT_SECONDS)
        with self.done:
            while True:
                job = self.jobs.get(job_id)
                left = deadline - time.monotonic()
                if job is None or job.state == "done" or left <= 0:
                    return job
                self.done.wait(min(left, 1.0))

    def describe(self) -> dict[str, Any]:
        return {"kbench": kbench_version(), "executor": self.slots.described, "judge": asdict(self.settings),
                "timed_baselines": list(self.settings.timed_baselines), "max_pending": self.max_pending,
                "limits": asdict(self.limits) | {"max_body_bytes": self.limits.max_body_bytes},
                "jobs": self.jobs.counts(), "evaluated_since_start": self.evaluated,
                "up_seconds": round(time.time() - self.started_at, 1)}

    # --- the scheduler -----------------------------------------------------
    def start(self) -> None:
        """Queue again what a previous process left running, and start judging."""
        _, given_up = self.jobs.requeue_running(MAX_ATTEMPTS)
        for job in given_up:
            self._finish(job, status="infra_error", reason=f"the service stopped {job.attempts} times while judging "
                         "this job; not tried again")
        self._thread = threading.Thread(target=self._schedule, daemon=True, name="kbench-serve-scheduler")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.slots.close()

    def _schedule(self) -> None:
        """The scheduler thread: it outlives any one failure (a full disk, a locked store), which it reports
        on stderr and retries, since a dead scheduler would leave every accepted job queued for good."""
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:  # noqa: BLE001
                print(f"kbench serve: the scheduler met an error and goes on:\n{traceback.format_exc()}",
                      file=sys.stderr, flush=True)
                self._stop.wait(1.0)

    def _step(self) -> None:
        while self.slots.idle > 0 and (job := self.jobs.claim()) is not None:
            self._hand_out(job)
        try:
            task, result = self.results.get(timeout=POLL_SECONDS)
        except queue.Empty:
            return
        try:
            outcome = self.slots.received(result)
        except Exception:  # noqa: BLE001 - the executor's own failure (a lost Ray worker): this job's, not the service's
            outcome = Outcome(task.job_id, "infra_error", reason=traceback.format_exc(limit=8))
        job = self.in_flight.pop(outcome.job_id)
        self._finish(job, outcome.status, outcome.verdict_json, outcome.reason, outcome.device)

    def _hand_out(self, job: Job) -> None:
        try:
            problem = self._problem(job)
        except ProblemError as exc:
            self._finish(job, "problem_error", reason=str(exc))
            return
        except Exception:  # noqa: BLE001 - its problem file could not be written: this job fails, not the service
            self._finish(job, "infra_error", reason=traceback.format_exc(limit=8))
            return
        self.in_flight[job.id] = job
        self.slots.submit(Task(job.id, problem, job.source, self.settings.options()))

    def _problem(self, job: Job) -> Problem:
        if job.problem_source is None:
            return find_problem(job.problem)
        folder = self.data_dir / "problems"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{hashlib.sha256(job.problem_source.encode()).hexdigest()}.py"
        if not path.is_file():
            partial = path.with_suffix(".partial")
            partial.write_text(job.problem_source)
            partial.replace(path)
        assert job.problem.startswith(INLINE_PREFIX)
        return load_problem(path, problem_id=job.problem)

    def _finish(self, job: Job, status: str, verdict_json: str | None = None, reason: str = "", device: str = "") -> None:
        """Commit a job's outcome with its reward (its provenance: the verdict's, and how the service judged)."""
        if verdict_json is not None:
            reward = reward_of(json.loads(verdict_json), job.shape, job.baseline)
        else:
            reward = failure_reward(status, reason, job.shape, job.baseline, problem=job.problem,
                                    solution_sha256=job.solution_sha256,
                                    provenance={"kbench": kbench_version(), "device": {"device": device or None}})
        data = reward.to_dict()
        data["provenance"]["service"] = {"executor": self.slots.described, "judge": asdict(self.settings),
                                         "job": job.id, "attempts": job.attempts}
        self.jobs.finish(job.id, status, verdict_json, data)
        self.evaluated += 1
        with self.done:
            self.done.notify_all()


def local_slots(devices: Sequence[str], ahead: bool = False) -> Callable[[Callable, queue.Queue], LocalSlots]:
    return lambda run, results: LocalSlots(devices, run, results, ahead)


def map_slots(executor: judge.Executor, count: int) -> Callable[[Callable, queue.Queue], MapSlots]:
    return lambda run, results: MapSlots(executor, count, run, results)


__all__ = ["Busy", "JudgeSettings", "LocalSlots", "MapSlots", "Outcome", "Service", "Task", "judge_task",
           "local_slots", "map_slots"]
