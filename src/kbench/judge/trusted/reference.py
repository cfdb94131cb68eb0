"""The reference's side of a measurement: the problem's own ``Model`` in
workers the judge trusts, the eager and compiled baseline columns, their cache.

Everything here runs only the problem's code, never a candidate's; a failure
here is the problem's (a ProblemError), never a verdict on a candidate.
"""

from __future__ import annotations

import functools
import os
import secrets
import sqlite3
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kbench.judge.exchange import vmm

from kbench.judge.trusted import tracebacks
from kbench.judge.trusted.baselines import (
    BaselineCache,
    CachedBaseline,
    Environment,
    cache_key,
    check_columns,
    default_cache_path,
    driver_version,
)
from kbench.judge.trusted.calls import Call, CallDriver, replayed_calls, timed_calls
from kbench.judge.trusted.compare import DEFAULT_CRITERION, TruthRecord
from kbench.judge.processes.devices import resolve_device, worker_env
from kbench.judge.guard import Finding
from kbench.judge.processes.process import Worker, WorkerLost
from kbench.judge.protocol.quiet import busy_gpu_finding
from kbench.judge.protocol.repeatability import ratio, speedup_interval, usable
from kbench.judge.protocol.timing import Timing, TimingSettings, check_settings, pooled
from kbench.suite import find_problem
from kbench.suite.problem import Problem, ProblemError, check_runnable, resolve_size

REFERENCE_TIMEOUT = 600.0
HANDOVER_SECONDS = 5.0  # for a shared buffer's descriptor to come, once it is reported sent


def load_message(problem: Problem, device: str, size: str, init_seed: int, dtype: str = "float32",
                 import_path: Path | None = None) -> dict[str, Any]:
    """A ``load`` command; ``import_path``: a directory the problem imports code from (kbench.judge.processes.sides)."""
    return {
        "op": "load",
        "problem_path": str(problem.path),
        "problem_sha256": problem.sha256,
        "problem_source": problem.source,  # the hashed text: workers never read the file
        "small": problem.small,
        "dtype_sizes": problem.dtype_sizes,
        "size": size,
        "device": device,
        "init_seed": init_seed,
        "dtype": dtype,
        "requires": list(problem.requires),
        **({"import_path": str(import_path)} if import_path else {}),
    }


def calls_message(timing: TimingSettings, round_index: int | None = None) -> dict[str, Any]:
    """A ``calls`` command: the worker makes calls as the judge orders them
    (kbench.judge.trusted.calls); a timing round's index places its buffers
    (``TimingSettings.new_placement_per_round``) alike in every worker."""
    return {"op": "calls", "settings": asdict(timing), "round": round_index}


def time_reference(
    problem: Problem | str | Path,
    device: str | None = None,
    *,
    size: str = "auto",
    timing: TimingSettings = TimingSettings(),
    dtype: str = "float32",
) -> dict[str, Any]:
    """Time the problem's eager ``Model`` alone, in a fresh process, by the judge's protocol.

    The same measurement ``evaluate`` makes for its eager baseline; used to
    measure baselines ahead of a run and to study how well they repeat.
    """
    problem = problem if isinstance(problem, Problem) else find_problem(problem)
    check_runnable(problem, dtype)
    device = resolve_device(device)
    size = resolve_size(size, device)
    deadline = time.monotonic() + REFERENCE_TIMEOUT
    seed = secrets.randbits(62)
    driver = CallDriver(timing, SeedFeed())
    with Worker(worker_env(device)) as reference:
        for message, what, orders in [
            ({**load_message(problem, device, size, seed, dtype), "role": "reference"}, "loading the problem", None),
            (calls_message(timing), "timing the eager reference", driver),
        ]:
            try:
                answer = reference.request(message, deadline, what, orders)
            except WorkerLost as lost:
                raise reference_failure(problem, what, lost.detail, reference) from lost
            if not answer["ok"]:
                raise reference_failure(problem, what, str(answer.get("error")), reference)
    return driver.timing(device, answer).to_dict()


def reference_failure(problem: Problem, what: str, detail: str, reference: Worker) -> ProblemError:
    """The problem is at fault when its own Model fails; say how, with what it printed.
    A traceback keeps the problem file's own frames (and the innermost), not kbench's."""
    detail = tracebacks.for_author(detail, str(problem.path), str(problem.path))
    printed = reference.output.text().strip()
    tail = f"\nreference output:\n{printed[-4000:]}" if printed else ""
    error = ProblemError(f"problem {problem.path}: the reference failed while {what}: {detail.strip()}{tail}")
    error.worker = reference  # which process failed: the evaluation's own reference, or a baseline column's
    return error


def measure_baselines(
    problem: Problem | str | Path,
    device: str | None = None,
    columns: tuple[str, ...] | list[str] = ("compile",),
    *,
    size: str = "auto",
    dtype: str = "float32",
    timing: TimingSettings = TimingSettings(),
    cache: Path | None = None,
) -> dict[str, dict[str, Any]]:
    """Measure compiled baseline columns ahead of a run, against eager, and cache them.

    Eager and each column run in reference workers of their own, alternating
    over ``timing.rounds`` rounds on the same inputs (eager sets each round's
    number of calls, the columns replay them), exactly as in an evaluation.
    Returns, per column, the median and the eager median of the same rounds.
    """
    problem = problem if isinstance(problem, Problem) else find_problem(problem)
    check_runnable(problem, dtype)
    device = resolve_device(device)
    size = resolve_size(size, device)
    wanted = check_columns(list(columns), device)
    check_settings(timing, device)
    side = ReferenceSide(problem, device, size, dtype, timing, secrets.randbits(62),
                          wanted, cache or default_cache_path())
    eager = Worker(worker_env(device))
    workers = {"eager": eager}
    try:
        eager.send({**side.load_message(), "role": "reference"})
        side.loaded = side.ask(eager, "loading the problem")
        compiled = side.column_workers(list(wanted))  # eager's is the one above
        workers.update(compiled)
        rounds: dict[str, list[dict[str, Any]]] = {column: [] for column in workers}
        eager_round = replace(timing, budget_seconds=timing.budget_seconds / max(1, timing.rounds))
        for index in range(max(1, timing.rounds)):
            first = side.time(eager, "eager", eager_round, SeedFeed(), index)
            rounds["eager"].append(first.timing.to_dict())
            side.replay_round(compiled, first, rounds, round_index=index)
    finally:
        for worker in workers.values():
            worker.close()
    eager_timing = pooled(rounds["eager"])
    results = {"eager": {"runtime_ms": eager_timing.median_ms, "eager_ms": eager_timing.median_ms}}
    for column in wanted:
        if column != "eager":
            measured = pooled(rounds[column])
            side.store(column, measured, eager_timing)
            results[column] = {"runtime_ms": measured.median_ms, "eager_ms": eager_timing.median_ms}
    return results


class SeedFeed:
    """Seeds for timed calls, drawn in the judge and handed out one call at a time.

    What it handed out is kept, so the eager baseline can be timed on the very
    inputs the candidate was timed on; past those it draws new ones.
    """

    def __init__(self, replay: list[int] | None = None):
        self._replay = list(replay or [])
        self.given: list[int] = []

    def __call__(self) -> int:
        seed = self._replay.pop(0) if self._replay else secrets.randbits(62)
        self.given.append(seed)
        return seed


@dataclass
class TimedSeries:
    """One worker's series of timed calls: the distribution, and each call as the judge saw it."""

    timing: Timing
    calls: list[Call]

    def timed(self) -> list[Call]:
        return timed_calls(self.calls)


class ReferenceSide:
    """The reference's side of a measurement: its workers, its deadline, and the
    baseline columns with their cache.

    Eager is timed in a reference worker (an evaluation's own, or one of its
    own ahead of a run); each compiled column in a fresh reference worker of
    its own that replays exactly the calls another worker just timed, on the
    same seeds; a compiled column measured before under this very environment
    comes from the cache instead. An evaluation has one beside its candidate;
    ``measure_baselines`` uses one alone.
    """

    def __init__(self, problem: Problem, device: str, size: str, dtype: str, timing: TimingSettings,
                 init_seed: int, columns: tuple[str, ...] = ("eager",), cache: Path | None = None):
        self.problem, self.device, self.size, self.dtype = problem, device, size, dtype
        self.timing = timing
        self.init_seed = init_seed
        self.columns = columns
        self.cache = cache
        self.deadline = time.monotonic() + REFERENCE_TIMEOUT
        self.loaded: dict[str, Any] = {}  # what the reference reported on load: GPU, versions, pinned settings
        self.notes: dict[str, list[str]] = {}  # cached entries found under another environment, never used
        self.flags: list[str] = []  # a cache that could not be read or written
        self.import_path: Path | None = None  # the reference's code beside the problem (kbench.judge.processes.sides)
        self.code_columns: dict[str, Path] = {}  # columns of the problem's Model with other code (Sides.columns)
        self.correctness = DEFAULT_CRITERION  # how its checks judge floating-point values (kbench.judge.trusted.compare)
        self.truth = TruthRecord()  # what its checks found against the float64 truth

    def load_message(self, size: str | None = None) -> dict[str, Any]:
        return load_message(self.problem, self.device, size or self.size, self.init_seed, self.dtype, self.import_path)

    def quiet_gpu_findings(self, reference: Worker) -> list[Finding]:
        """On a GPU, before a baseline round: no work the stopped candidate left queued (kbench.judge.protocol.quiet)."""
        if not self.device.startswith("cuda"):
            return []
        busy = busy_gpu_finding(lambda: self.ask(reference, "probing the GPU", {"op": "probe"})["round_trips_ms"])
        return [Finding("gpu-busy", busy)] if busy else []

    def ask(self, reference: Worker, what: str, message: dict[str, Any] | None = None,
            orders: CallDriver | None = None) -> dict[str, Any]:
        """The reference's answer; any failure there is the problem's, not the candidate's."""
        try:
            answer = reference.request(message, self.deadline, what, orders)
        except WorkerLost as lost:
            raise reference_failure(self.problem, what, lost.detail, reference) from lost
        if not answer["ok"]:
            raise reference_failure(
                self.problem, what, f"{answer.get('error')}\n{answer.get('traceback', '')}", reference
            )
        return answer

    def column_workers(self, columns: list[str], consumer: bool = False) -> dict[str, Worker]:
        """A fresh reference worker per compiled column or code column, loaded at the test size
        (``start_columns`` then ``loaded_columns``)."""
        return self.loaded_columns(self.start_columns([c for c in columns if c != "eager"], consumer))

    def start_columns(self, columns: list[str], consumer: bool = False, started: Worker | None = None
                      ) -> dict[str, Worker]:
        """A fresh reference worker per column (eager among them where asked; the first may be one
        ``started`` ahead), told to load at the test size; with ``consumer``, one whose calls are drawn
        and read by the reference worker, as a candidate's are (``ReferenceExchange``), so that a
        baseline is timed as the candidate is."""
        workers: dict[str, Worker] = {}
        try:
            for index, column in enumerate(columns):
                worker = started if index == 0 and started is not None else Worker(worker_env(self.device))
                workers[column] = worker
                message = {**self.load_message(), "role": "reference", "consumer": consumer}
                if column in self.code_columns:  # the problem's Model itself, with that code first on its path
                    worker.send({**message, "import_path": str(self.code_columns[column])})
                else:
                    worker.send({**message, "column": None if column == "eager" else column})
        except BaseException:
            for worker in workers.values():
                worker.close()
            raise
        return workers

    def loaded_columns(self, workers: dict[str, Worker]) -> dict[str, Worker]:
        """``workers`` once each has loaded (all closed if one fails)."""
        try:
            for column, worker in workers.items():
                self.ask(worker, f"loading the problem for the {column} baseline")
        except BaseException:
            for worker in workers.values():
                worker.close()
            raise
        return workers

    def time(self, worker: Worker, column: str, settings: TimingSettings, seeds: SeedFeed,
             round_index: int | None = None, kinds: list[str] | None = None,
             trusted_by: Worker | None = None) -> TimedSeries:
        """One series of timed calls of a reference worker, driven from here (``kinds``: CallDriver's),
        its inputs drawn and outputs read by ``trusted_by`` (a consumer's reference) or by itself."""
        trusted = ReferenceExchange(self, trusted_by, worker, column) if trusted_by is not None else None
        driver = CallDriver(settings, seeds, kinds=kinds, trusted=trusted)
        answer = self.ask(worker, f"timing the {column} baseline", calls_message(settings, round_index), driver)
        return TimedSeries(driver.timing(self.device, answer), driver.calls)

    def replay_round(self, workers: dict[str, Worker], timed: TimedSeries, rounds: dict[str, list[dict[str, Any]]],
                     series: dict[str, list[TimedSeries]] | None = None, round_index: int | None = None,
                     trusted_by: Worker | None = None) -> None:
        """Each baseline worker times exactly the calls of ``timed`` (warm-up, settling and timed, in
        its order), on its seeds; without the settling ones with ``replay_settling`` off (an experiment);
        consumers' calls drawn and read by ``trusted_by``."""
        calls = replayed_calls(timed.calls, self.timing.replay_settling)
        settings = replace(
            self.timing,
            warmup_calls=timed.timing.warmup_calls,
            warmup_seconds=0.0,
            min_calls=timed.timing.count,
            max_calls=timed.timing.count,
            target_rel_error=0.0,
            budget_seconds=REFERENCE_TIMEOUT,
        )
        for column, worker in workers.items():
            measured = self.time(worker, column, settings, SeedFeed(replay=[c.seed for c in calls]), round_index,
                                 [c.kind for c in calls], trusted_by)
            rounds[column].append(measured.timing.to_dict())
            if series is not None:
                series.setdefault(column, []).append(measured)

    def check_call(self, reference: Worker, call: Call, tolerance: dict[str, Any], what: str,
                   truth_on_pass: bool = True) -> tuple[dict[str, Any], list[Finding]]:
        """The reference's check of the call whose output it read last (kbench.judge.exchange.outputs.check_held),
        and what it found of the call's inputs. The float64 truth is asked for ``truth_on_pass`` (a series'
        first trial: the verdict's errors against it), else only where the reference's own output rejects
        a value, the one place it decides (compare_outputs)."""
        message = {"op": "compare", "seed": call.seed, "candidate_devices": call.devices or {}, "tolerance": tolerance,
                   "correctness": self.correctness, "truth_on_pass": truth_on_pass}
        answer = self.ask(reference, what, message)
        self.truth.add(answer["comparison"])
        changed = answer.get("inputs_changed") is True  # the reference's own reading of the shared inputs
        return answer, [Finding("input-mutated", f"call {call.index}: the shared inputs after the call are not those "
                                "the trusted side drew (changed during forward)")] if changed else []

    def fails_alone(self, size: str) -> bool:
        """Whether a fresh reference worker, alone, fails to load the problem at
        ``size`` or to run its forward once (a failure beside a candidate is the
        problem's only if so)."""
        alone = Worker(worker_env(self.device))
        try:
            alone.send({**self.load_message(size), "role": "reference"})
            self.ask(alone, "loading the problem again, alone")
            self.ask(alone, "running forward again, alone", {"op": "record", "seed": secrets.randbits(62)})
        except ProblemError:
            return True
        finally:
            alone.close()
        return False

    def environment(self) -> Environment:
        return Environment(
            device_name=self.loaded.get("device_name"),
            driver=driver_version() if self.device.startswith("cuda") else None,
            versions=self.loaded.get("versions", {}),
            settings=self.loaded.get("settings", {}),
            timing=asdict(self.timing),
        )

    def cached_columns(self) -> dict[str, CachedBaseline]:
        """Compiled columns measured before under exactly this environment; the
        entries found under another one are kept in ``notes``, never used."""
        found: dict[str, CachedBaseline] = {}
        if self.cache is None or self.columns == ("eager",):
            return found
        try:
            environment = self.environment()
            with BaselineCache(self.cache) as cache:
                for column in self.columns:
                    if column == "eager":
                        continue
                    hit, not_used = cache.lookup(self.problem.sha256, self.size, self.dtype, column, environment,
                                                 self.cache_sizes())
                    if hit:
                        found[column] = hit
                    if not_used:
                        self.notes[column] = not_used
        except (OSError, sqlite3.Error) as exc:  # an unreadable cache: measure everything, and say so
            self.flags.append(f"baseline cache {self.cache} not read: {exc}")
            self.cache = None
            return {}
        return found

    def cache_sizes(self) -> dict[str, Any] | None:
        """The sizes in a cache entry's key: in another dtype than float32 the same file
        runs at its variant's sizes or as written (a KernelBench precision)."""
        return None if self.dtype == "float32" else self.problem.size_constants(self.size, self.dtype)

    def store(self, column: str, measured: Timing, eager: Timing) -> None:
        """A compiled column just measured, into the cache (where there is one)."""
        if self.cache is None:
            return
        environment = self.environment()
        entry = CachedBaseline(
            key=cache_key(self.problem.sha256, self.size, self.dtype, column, environment, self.cache_sizes()),
            problem_sha256=self.problem.sha256, size=self.size, dtype=self.dtype, column=column,
            runtime_ms=measured.median_ms, eager_ms=eager.median_ms, timing=measured.summary(),
            environment=asdict(environment), measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        try:
            with BaselineCache(self.cache) as cache:
                cache.put(entry)
        except (OSError, sqlite3.Error) as exc:
            self.flags.append(f"baseline cache {self.cache} not written: {exc}")

    def speedups(self, candidate: Timing, cand_rounds: list[dict[str, Any]],
                 base_rounds: dict[str, list[dict[str, Any]]], cached: dict[str, CachedBaseline],
                 over_rounds: bool) -> tuple[dict[str, Any], dict[str, float], dict[str, list[float]]]:
        """Each column's baseline record, speedup and its 95% interval, from the
        candidate's pooled timing and each measured column's rounds (eager among
        them); a cached column scales eager's speedup by its time over eager as
        cached. A compiled column measured now goes into the cache."""
        baselines: dict[str, Any] = {}
        speedup: dict[str, float] = {}
        intervals: dict[str, list[float]] = {}
        cand_samples = [r["samples_ms"] for r in cand_rounds]
        interval = functools.partial(speedup_interval, candidate_rounds=cand_samples, over_rounds=over_rounds)
        # Each measured column (eager too) pooled and bootstrapped once; cached columns scale eager's.
        measured_columns = {column: pooled(rounds) for column, rounds in base_rounds.items()}
        bounds = {column: interval([r["samples_ms"] for r in rounds]) for column, rounds in base_rounds.items()}
        eager = measured_columns["eager"]
        if not usable(candidate.median_ms):  # issue 57: a ratio never divides by a time no call takes
            raise WorkerLost("protocol", f"the candidate's median time read {candidate.median_ms!r} ms, which no "
                                         "call takes")
        for column in (*self.columns, *self.code_columns):
            if column in cached:  # eager now over the candidate, times the column over eager as cached
                entry = cached[column]
                factor = ratio(entry.runtime_ms, entry.eager_ms)
                low, high = bounds["eager"]
                baselines[column] = {
                    "runtime_ms": entry.runtime_ms, "timing": entry.timing, "source": "cache",
                    "cache": {"key": entry.key, "measured_at": entry.measured_at, "eager_ms": entry.eager_ms},
                }
                eager_speedup = ratio(eager.median_ms, candidate.median_ms)
                speedup[column] = ratio(eager_speedup * factor, 1.0) if eager_speedup and factor else None
                if speedup[column] is not None:
                    intervals[column] = [low * factor, high * factor]
                continue
            measured, (low, high) = measured_columns[column], bounds[column]
            baselines[column] = {
                "runtime_ms": measured.median_ms,
                "timing": {**measured.summary(), "rounds": [r["median_ms"] for r in base_rounds[column]]},
                "source": "measured",
            }
            speedup[column] = ratio(measured.median_ms, candidate.median_ms)
            if speedup[column] is not None:
                intervals[column] = [low, high]
            if column != "eager" and column not in self.code_columns and usable(measured.median_ms):
                self.store(column, measured, eager)
        for column in (c for c, value in speedup.items() if value is None):
            self.flags.append(f"no speedup over {column}: its time read {baselines[column]['runtime_ms']!r} ms, "
                              "which no call takes")
        for column, notes in self.notes.items():
            baselines[column]["not_used"] = notes
        return baselines, speedup, intervals


class ReferenceExchange:
    """The reference worker as the trusted side of a candidate's calls (``calls.TrustedSide``):
    it draws each call's inputs into memory it shares with the candidate's process, and copies
    each output out of the candidate's shared memory into its own; a new buffer's descriptor
    passes through the judge, from one worker's handles socket to the other's."""

    def __init__(self, side: ReferenceSide, reference: Worker, candidate: Worker, name: str = "candidate"):
        self.side, self.reference, self.candidate, self.name = side, reference, candidate, name

    def draw(self, seed: int) -> dict[str, Any]:
        message = {"op": "draw", "seed": seed, "share": self.name}
        answer = self.side.ask(self.reference, "drawing a call's inputs", message)
        return {**answer, "fresh": answer.get("fresh") is True and _relay(self.reference, self.candidate)}

    def read(self, done: dict[str, Any]) -> dict[str, Any]:
        fresh = done.get("fresh") is True and _relay(self.candidate, self.reference)
        message = {"op": "read", "layout": done.get("layout"), "fresh": fresh, "capacity": done.get("capacity"),
                   "writer": self.name}
        return self.side.ask(self.reference, "reading a call's output", message)


def _relay(source: Worker, to: Worker) -> bool:
    """One descriptor from ``source``'s handles socket to ``to``'s; False when none came."""
    fd = vmm.receive_fd(source.handles, timeout=HANDOVER_SECONDS)
    if fd is None:
        return False
    try:
        to.handles.settimeout(HANDOVER_SECONDS)  # a worker that never reads its socket blocks no one
        vmm.send_fd(to.handles, fd)
    except OSError:
        return False  # the receiving worker is gone or deaf: what it does next without the buffer is its own
    finally:
        os.close(fd)
    return True
