"""The judge: one solution, one problem, one verdict.

Two worker processes take part: a reference worker that only ever loads the
problem's ``Model``, and a candidate worker that loads the solution's
``ModelNew``. The judge draws every seed after the candidate is built (so the
candidate cannot predict them) and decides; the comparison runs in the
reference's process, so expected outputs never leave it. For each trial the
candidate answers first and the reference second, so an expected output never
exists while the candidate could still change its own answer. The eager
baseline is timed after the candidate's process is gone, so nothing of the
candidate shares the GPU with it. The guard's rules (kbench.judge.guard) are
applied here, under the evaluation's policy.
"""

from __future__ import annotations

import secrets
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from kbench.core.solution import Solution
from kbench.core.verdict import Trial, Verdict
from kbench.judge.processes import background
from kbench.judge.trusted import tracebacks
from kbench.judge.trusted.answers import failure_phase, recorded_call, reported_findings, seconds
from kbench.judge.trusted.baselines import CachedBaseline, check_columns, default_cache_path
from kbench.judge.trusted.calls import Call, CallDriver, Checks, ProtocolViolation, accepted_medians, trusted_times
from kbench.judge.trusted.compare import DEFAULT_CRITERION, Comparison, check_criterion
from kbench.judge.confirmation import confirmed
from kbench.judge.processes.devices import gpu_turn, resolve_device
from kbench.judge.guard import AFTER_TRIALS, DEFAULT_POLICY, STYLE, Finding, action, check_policy
from kbench.judge.guard.reported import reference_op_findings, speed_of_light_findings, timer_findings
from kbench.judge.guard.static import check_source
from kbench.judge.protocol.pairs import most_pairs, sampled
from kbench.judge.processes.process import DEFAULT_TIMEOUT, Worker, WorkerLost, close_all
from kbench.judge.trusted.reference import (
    REFERENCE_TIMEOUT, ReferenceExchange, ReferenceSide, SeedFeed, TimedSeries, calls_message,
)
from kbench.judge.protocol.repeatability import widen
from kbench.judge.protocol.rounds import RoundPlan
from kbench.judge.processes.sandbox import NO_SANDBOX, Sandbox, find_sandbox
from kbench.judge.processes.sides import Sides, candidate_checkout
from kbench.judge.processes.spares import Spares, current, evaluation_workers, for_pairs
from kbench.judge.protocol.timing import TimingSettings, check_settings, pooled, with_samples
from kbench.suite import find_problem
from kbench.suite.problem import Problem, ProblemError, check_runnable, resolve_size

DEFAULT_TRIALS = 5
CHECK_MARGIN_SECONDS = 5.0

# Which status a failure in each worker phase gets.
PHASE_STATUS = {"build": "compile_error", "init": "compile_error", "forward": "runtime_error", "output": "incorrect"}
LOST_STATUS = {"timeout": "timeout", "died": "crashed", "memory": "crashed", "protocol": "crashed"}


class _Verdict(Exception):
    """Ends an evaluation early with a status and reason."""

    def __init__(self, status: str, reason: str, phase: str | None = None):
        super().__init__(reason)
        self.status, self.reason, self.phase = status, reason, phase


def evaluate(
    problem: Problem | str | Path,
    solution: Solution | str | Path,
    device: str | None = None,
    *,
    size: str = "auto",
    trials: int = DEFAULT_TRIALS,
    timeout: float = DEFAULT_TIMEOUT,
    measure_time: bool = True,
    timing: TimingSettings = TimingSettings(),
    memory_limit_bytes: int | None = None,
    policy: str = DEFAULT_POLICY,
    dtype: str = "float32",
    baselines: tuple[str, ...] | list[str] = ("eager",),
    baseline_cache: Path | None | bool = True,
    sandbox: bool = True,
    progress: Callable[[str], None] | None = None,
    spares: Spares | None = None,
    sides: Sides | None = None,
    correctness: str = DEFAULT_CRITERION,
) -> Verdict:
    """Judge ``solution`` against ``problem`` and return the verdict.

    ``timeout`` bounds the candidate's whole evaluation (build, trials and timing); ``memory_limit_bytes`` its
    host memory. ``policy`` says which of the guard's rules reject and which only flag (``strict``, ``lenient``,
    ``off``: docs/guard.md). ``dtype`` is one of the problem's ``KBENCH_DTYPES``. Raises ProblemError when the
    problem itself is unusable or has no such dtype (ProblemSkipped when it needs a module this Python lacks)
    and ValueError for an unknown device, size, policy or baseline column; every fault of the candidate ends in
    a verdict instead. ``baselines`` are the columns to time (eager always); compiled ones are taken from
    ``baseline_cache`` (a path; True for the default one beside the build cache, None or False for none) when
    measured there before under this very environment, and stored there when measured now. The candidate runs in
    an OS sandbox (kbench.judge.processes.sandbox); SandboxUnavailable when none can be set up here, unless
    ``sandbox=False`` (recorded in the verdict). ``progress`` is told each step as it starts ("trial 2 of 5"),
    for a display: never inside a timed call, and nothing it does changes the verdict. ``spares``: workers
    started ahead (kbench.judge.processes.spares; default: the executor thread's, else for several worker pairs its own,
    spares.for_pairs). A rejection that noise could have made is a suspicion, evaluated again before it is a
    verdict (kbench.judge.confirmation); Unconfirmed when the two evaluations disagree that way. With
    ``timing.pairs`` or ``max_pairs`` above 1, the verdict combines several evaluations, each in fresh workers
    (kbench.judge.protocol.pairs). ``sides``: each side's code beside the problem file, its Model the candidate (.sides).
    """
    problem = problem if isinstance(problem, Problem) else find_problem(problem)
    check_runnable(problem, dtype)
    solution = solution if isinstance(solution, Solution) else Solution.from_file(solution)
    device = resolve_device(device)
    size = resolve_size(size, device)
    check_settings(timing, device)
    confinement = find_sandbox() if sandbox else None

    def judged(spares: Spares | None, first_pair: bool = True) -> Verdict:
        evaluation = _Evaluation(problem, solution, device, size, trials, timeout, timing, memory_limit_bytes,
                                 check_policy(policy), dtype)
        evaluation.reference_side.columns = check_columns(list(baselines), device)
        evaluation.reference_side.correctness = check_criterion(correctness)  # the float64 truth, or KernelBench's
        evaluation.reference_side.cache = default_cache_path() if baseline_cache is True else (baseline_cache or None)
        evaluation.tell = progress or evaluation.tell
        evaluation.sandbox, evaluation.spares, evaluation.other_size_trial = confinement, spares, first_pair
        evaluation.sides, evaluation.reference_side.import_path = sides, sides and sides.reference
        evaluation.reference_side.code_columns = dict(sides.columns) if sides else {}
        return evaluation.run(measure_time)

    with for_pairs(spares or current(device, confinement), device, confinement, most_pairs(timing)) as kept:
        return sampled(lambda first: confirmed(lambda workers: judged(workers, first), kept, progress), timing,
                       sides is not None, progress)


class _Evaluation:
    def __init__(self, problem, solution, device, size, trials, timeout, timing, memory_limit_bytes, policy, dtype):
        self.problem: Problem = problem
        self.solution: Solution = solution
        self.device: str = device
        self.size: str = size
        self.dtype: str = dtype
        self.trials = trials
        self.timeout = timeout
        self.timing_settings: TimingSettings = timing
        self.memory_limit = memory_limit_bytes
        self.phase_seconds: dict[str, float] = {}
        self.record: dict[str, Any] = {"trials": [], "baselines": {}, "speedup": {}, "speedup_interval": {},
                                       "speedup_interval_within": {}, "tolerance": {}}
        self.seeds: dict[str, Any] = {"init": secrets.randbits(62)}
        self.reference_side = ReferenceSide(problem, device, size, dtype, timing, self.seeds["init"])
        self.policy = policy
        self.flags, self.style_findings = [], []  # kept flags' texts; style findings applied after the trials
        self.copy_path = ""  # the solution's copy in the evaluation's private folder
        self.tell: Callable[[str], None] = lambda step: None  # evaluate's progress
        self.sandbox: Sandbox | None = None
        self.handover: set[str] = set()
        self.spares: Spares | None = None
        self.sides: Sides | None = None
        self.other_size_trial = True  # a later worker pair's evaluation leaves it to the first (kbench.judge.protocol.pairs)
        self.eager_worker: dict[str, Worker] = {}  # eager's worker, a consumer of the reference's draws (_measure)

    def run(self, measure_time: bool) -> Verdict:
        started = time.monotonic()
        findings = [] if self.sides else check_source(self.solution.source, reference_source=self.problem.source)
        self.style_findings = [f for f in findings if f.rule in AFTER_TRIALS]  # once the trials pass
        try:
            self._consider([f for f in findings if f.rule not in AFTER_TRIALS])
        except _Verdict as verdict:  # rejected before anything runs
            return self._verdict(verdict.status, verdict.reason, None, time.monotonic() - started)
        with gpu_turn(self.device) as waited:  # the wait is not counted against the time limit
            if waited > 0.01:
                self.phase_seconds["waiting"] = waited
            self.deadline = started + waited + self.timeout
            self.reference_side.deadline = started + waited + max(self.timeout, REFERENCE_TIMEOUT)
            key = self.sides.candidate_key if self.sides else self.solution.sha256
            with evaluation_workers(self.spares, self.device, key, self.sandbox, self.memory_limit) as (
                    reference, candidate, self.tmp, self.spare_eager):
                solution_path = self.tmp / "solution.py"  # the candidate's scratch is the evaluation's private folder
                solution_path.write_text(self.solution.source)
                self.copy_path = str(solution_path)
                status, reason = self._judge(reference, candidate, solution_path, measure_time)
                closing = time.monotonic()
            self.phase_seconds["close"] = time.monotonic() - closing
        return self._verdict(status, reason, candidate, time.monotonic() - started)

    def _judge(self, reference: Worker, candidate: Worker, solution_path: Path, measure_time: bool) -> tuple[str, str]:
        # first, one trial at the problem's other (small) size: a kernel for the test shape only fails it
        other_size = "small" if self.size == "default" and self.problem.small and self.other_size_trial else None
        self.reference_size = other_size or self.size
        load = self.reference_side.load_message(other_size)
        load["solution_path"] = str(solution_path)
        try:
            reference.send({**load, "role": "reference"})
            candidate.send({**load, "role": "candidate", **candidate_checkout(self.sides, self.tmp)})
            if measure_time:  # eager's own worker, timed as the candidate is, starts while the candidate builds
                self.eager_worker = self.reference_side.start_columns(["eager"], True, self.spare_eager)
            self.tell("loading the problem, building and loading the solution")
            with self._phase("load"):
                ref_loaded = self.reference_side.ask(reference, "loading the problem")
                loaded = self._ask_candidate(candidate, "building and loading the solution")
            self.reference_side.loaded = ref_loaded
            self.phase_seconds["build"] = seconds(loaded.get("import_seconds"))
            self._consider(reported_findings(loaded))

            if other_size:
                self._other_size_trial(reference, candidate, other_size)
            self.seeds["trials"] = [secrets.randbits(62) for _ in range(self.trials)]
            with self._phase("trials"):
                for index, comparison in enumerate(self._trial_calls(reference, candidate, self.seeds["trials"], True)):
                    self.record["trials"].append(Trial(index=index, ok=comparison.ok, **comparison.errors()))
                    if not comparison.ok:
                        raise _Verdict("incorrect", f"trial {index}: {comparison.check}: {comparison.detail}")
            findings, self.style_findings = self.style_findings, []
            self._consider(findings)
            with self._phase("record"):
                self._record_ops(reference)
            if measure_time:
                self._measure(reference, candidate)
            candidate.assert_quiet()
        except _Verdict as verdict:
            return verdict.status, verdict.reason
        except WorkerLost as lost:
            if lost.kind == "forged":
                return "rejected", f"results-channel: {lost.detail}"
            return LOST_STATUS[lost.kind], lost.detail
        except ProblemError as failure:
            return self._blame(failure, reference, candidate)
        finally:  # a spare's eager worker closes with its pair, beside the others
            close_all([worker for worker in self.eager_worker.values() if worker is not self.spare_eager])
        checked = f"; {self.record['timed_checks']} timed calls checked" if measure_time else ""
        return "correct", f"{self.trials} of {self.trials} trials match the reference{checked}"

    def _trial_calls(self, reference: Worker, candidate: Worker, seeds: list[int], record: bool = False,
                     what: str = "trial"):
        """Calls on ``seeds``, each saved and checked; with ``record``, a secret one recorded (``self.recorded``)."""
        settings = replace(self.timing_settings, warmup_calls=0, warmup_seconds=0.0, min_calls=len(seeds),
                           max_calls=len(seeds), target_rel_error=0.0, budget_seconds=self.timeout)
        driver = self._candidate_calls(reference, candidate, f"running the {what}s", settings, SeedFeed(seeds),
                                       Checks(every=True),
                                       on_call=lambda call: self.tell(f"{what} {call.index + 1} of {len(seeds)}"),
                                       on_check=lambda call: self.tell(f"checking {what} {call.index + 1} of {len(seeds)}"),
                                       record=record)
        self.recorded = (driver.record_at, driver.final.get("recorded"))
        for call in driver.saved():
            yield call.comparison

    def _other_size_trial(self, reference: Worker, candidate: Worker, other_size: str) -> None:
        """One trial at the other size, failed with the failure's own status, not ``rejected``: a kernel
        special-cased for the test shape and one written without bounds checks fail it alike."""
        self.seeds["other_size"] = secrets.randbits(62)
        with self._phase("other_size"):
            where = f"at the problem's {other_size} size"
            try:
                comparison = next(self._trial_calls(reference, candidate, [self.seeds["other_size"]],
                                                    what=f"{other_size}-size trial"))
            except _Verdict as failed:
                if failed.status in ("rejected", "timeout"):  # another rule's verdict, or no answer: say where
                    raise _Verdict(failed.status, f"{where}: {failed.reason}") from failed
                raise _Verdict(failed.status, f"other-size: {where}: {failed.reason}") from failed
            except WorkerLost as lost:
                raise WorkerLost(lost.kind, f"other-size: {where}: {lost.detail}") from lost
            if not comparison.ok:
                raise _Verdict("incorrect", f"other-size: wrong {where}: {comparison.check}: {comparison.detail}")
            resize = {"op": "resize", "size": self.size, "init_seed": self.seeds["init"]}
            resized = self.reference_side.ask(reference, "building the model at the test size", resize)
            self.reference_size = self.size
            self.reference_side.loaded["work"] = resized["work"]  # the speed of light of the judged size
            self._ask_candidate(candidate, "building the model at the test size", resize)

    def _record_ops(self, reference: Worker) -> None:
        """The recorded call (a secret trial) as reported, and the reference's ops on its seed."""
        record_at, recorded = self.recorded
        if record_at is None:  # no trials, no call recorded
            return
        ops, findings = recorded_call(recorded)
        self._consider(findings)
        self.seeds["record"] = self.seeds["trials"][record_at]
        message = {"op": "record", "seed": self.seeds["record"]}
        reference_ops = self.reference_side.ask(reference, "recording the reference's operations", message)["ops"]
        self._consider(reference_op_findings(reference_ops, ops))

    def _measure(self, reference: Worker, candidate: Worker) -> None:
        """Time the candidate and each baseline column, alternating, over several rounds.

        Round r times the candidate (its process running alone, with fresh
        seeds), then every baseline column on the very same inputs, each in its
        own worker, its calls drawn and read by the reference worker exactly as the
        candidate's are, while the candidate's processes are stopped; after
        each round the reference checks the timed calls the judge picked in it.
        What drifts between processes and over time then moves both sides of
        the speedup alike (docs/timing.md). The judge's clock around every call
        bounds the time each of the candidate's calls is taken to have (trusted_times).
        """
        plan = RoundPlan(self.timing_settings, self.deadline - CHECK_MARGIN_SECONDS, self.device,
                         self.sides.decide_at if self.sides else None)
        rounds, side = plan.most, self.reference_side  # at most; fewer once plan.enough
        cached = side.cached_columns()
        workers = {**side.loaded_columns(self.eager_worker),
                   **side.column_workers([c for c in side.columns if c not in cached] + list(side.code_columns),
                                         consumer=True)}
        with background.BACKGROUND.quiet():  # builds ahead and the next evaluations' workers stop while anything is timed
            try:
                cand_rounds: list[TimedSeries] = []
                base_rounds: dict[str, list[dict[str, Any]]] = {column: [] for column in workers}
                base_series: dict[str, list[TimedSeries]] = {}
                for index in range(rounds):
                    self.tell(f"timing the solution, {plan.label(index)}")
                    timed = self._candidate_round(reference, candidate, plan.round_settings(index), index)
                    cand_rounds.append(timed)
                    if index == rounds - 1:
                        candidate.assert_quiet()
                        candidate.close()
                    else:
                        candidate.pause()
                    self._check_round(timed, index)
                    # A compiled column compiles (max-autotune: minutes) in its first round.
                    side.deadline = max(side.deadline, time.monotonic() + REFERENCE_TIMEOUT)
                    self.tell(f"timing the baselines ({', '.join(workers)}), {plan.label(index)}")
                    with self._phase("baseline"):
                        self._consider(side.quiet_gpu_findings(reference))
                        side.replay_round(workers, timed, base_rounds, base_series, index, trusted_by=reference)
                    columns_ms = {column: [r["median_ms"] for r in each] for column, each in base_rounds.items()}
                    cand_ms = accepted_medians(cand_rounds, base_series["eager"], self.device)  # as the verdict has them
                    if index < rounds - 1 and plan.enough(cand_ms, columns_ms):
                        candidate.assert_quiet()  # stopped since its round: closed without running again
                        candidate.close()
                        break
                    candidate.resume()
            finally:
                for worker in workers.values():
                    worker.close()
        accepted, excess, findings = trusted_times([series.timed() for series in cand_rounds],
                                                   [series.timed() for series in base_series["eager"]], self.device)
        self._consider(findings)
        self._record_timings([with_samples(series.timing, times).to_dict()
                              for series, times in zip(cand_rounds, accepted)], base_rounds, cached)
        self.record["timing"].update(excess)

    def _candidate_round(self, reference: Worker, candidate: Worker, settings: TimingSettings,
                         index: int) -> TimedSeries:
        """One round of the candidate's timed calls, under ``settings`` (RoundPlan.round_settings);
        a secret few of them saved for the reference to check."""
        if settings.budget_seconds <= 0:
            raise _Verdict("timeout", "no time left to measure within the time limit")
        with self._phase("timing"):
            driver = self._candidate_calls(reference, candidate, "timing the solution", settings, SeedFeed(),
                                           Checks(), index)
        return TimedSeries(driver.timing(self.device, driver.final), driver.calls)

    def _check_round(self, timed: TimedSeries, index: int) -> None:
        """The timed calls the judge picked in this round, as the reference checked them."""
        for call in (c for c in timed.calls if c.comparison is not None):
            self.record["timed_checks"] = self.record.get("timed_checks", 0) + 1
            if not call.comparison.ok:
                raise _Verdict("incorrect", f"timed-call-check: call {call.index} of timing round {index}: "
                               f"{call.comparison.check}: {call.comparison.detail}")

    def _record_timings(self, cand_rounds: list[dict[str, Any]], base_rounds: dict[str, list[dict[str, Any]]],
                        cached: dict[str, CachedBaseline]) -> None:
        candidate = pooled(cand_rounds)
        self._consider(timer_findings(cand_rounds))
        self.record["speed_of_light_ms"], beyond = speed_of_light_findings(
            candidate.median_ms, self.reference_side.loaded, self.dtype)
        self._consider(beyond)
        self.record["timing"] = {**candidate.summary(), "rounds": [r["median_ms"] for r in cand_rounds]}
        columns = self.reference_side.speedups(candidate, cand_rounds, base_rounds, cached,
                                                self.timing_settings.new_placement_per_round)
        for key, values in zip(("baselines", "speedup", "speedup_interval_within"), columns):
            self.record[key].update(values)
        repository = self.sides is not None  # a repository task's columns: that track's spread
        self.record["speedup_interval"] = {
            column: widen(self.record["speedup"][column], within, self.device, repository)
            for column, within in self.record["speedup_interval_within"].items()}

    def _candidate_calls(self, reference: Worker, candidate: Worker, what: str, settings: TimingSettings,
                         seeds: SeedFeed, checks: Checks, round_index: int | None = None,
                         on_call: Callable[[Call], None] | None = None,
                         on_check: Callable[[Call], None] = lambda call: None,
                         record: bool = False) -> CallDriver:
        """A series of the candidate's calls, driven from here (kbench.judge.trusted.calls), their inputs drawn
        and their outputs read by the reference, each call the judge picks checked by the reference
        right after its read (``on_check`` told first)."""
        def check(call: Call) -> Comparison:  # the output is right (ReferenceSide.check_call); the truth: see there
            on_check(call)
            answer, findings = self.reference_side.check_call(reference, call, self.problem.tolerance,
                                                              f"checking call {call.index} of {what}",
                                                              truth_on_pass=checks.every and call.index == 0)
            self.handover.add("device" if self.device.startswith("cuda") else "shared memory")
            self.record["tolerance"].update(answer["tolerance"])
            self._consider(findings)
            return Comparison(**answer["comparison"])

        driver = CallDriver(settings, seeds, checks, self.deadline - CHECK_MARGIN_SECONDS, on_call, check,
                            on_finding=lambda finding: self._consider([finding]), record=record,
                            trusted=ReferenceExchange(self.reference_side, reference, candidate))
        try:
            driver.final = self._ask_candidate(candidate, what, calls_message(settings, round_index), driver)
        except ProtocolViolation as violation:
            self._consider([violation.finding])
            raise WorkerLost("protocol", violation.finding.text()) from violation
        self._consider(reported_findings(driver.final))
        if strays := candidate.strays():
            self._consider([Finding("threads", f"{len(strays)} process(es) the solution started still running after "
                                               "its calls (seen from the judge)")])
        return driver

    def _blame(self, failure: ProblemError, reference: Worker, candidate: Worker) -> tuple[str, str]:
        """The reference failed. While the candidate's process was alive (starving
        it of device memory, say), the problem is to blame only if a fresh
        reference, with the candidate's process gone, fails on its own too; the
        candidate only if it fails beside it again (a suspicion: kbench.judge.confirmation)."""
        if getattr(failure, "worker", None) is not reference or candidate.process.poll() is not None:
            raise failure
        candidate.close()
        if self.reference_side.fails_alone(self.reference_size):
            raise failure from None
        return "rejected", f"reference-interference: {failure}; alone, with the candidate's process gone, it did not"

    # --- the guard's judge-side rules -------------------------------------
    def _consider(self, findings: list[Finding]) -> None:
        """Apply the policy (with sides no style rule): flags are kept, the first rejecting finding ends it."""
        rejecting = []
        for finding in findings:
            verdict = "ignore" if self.sides and finding.rule in STYLE else action(finding.rule, self.policy)
            if verdict == "reject":
                rejecting.append(finding)
            elif verdict == "flag":
                self.flags.append(finding.text())
        if rejecting:
            raise _Verdict("rejected", rejecting[0].text())

    def _ask_candidate(
        self, candidate: Worker, what: str, message: dict[str, Any] | None = None, orders: CallDriver | None = None
    ) -> dict[str, Any]:
        """The candidate's answer (to ``message``, or to the one already sent)."""
        answer = candidate.request(message, self.deadline, what, orders)
        if not answer["ok"]:
            phase = failure_phase(answer)
            status = PHASE_STATUS.get(phase, "runtime_error")
            reason = f"{phase}: {answer.get('error')}\n{answer.get('traceback', '')}".strip()
            raise _Verdict(status, self._for_author(reason), phase)
        return answer

    def _for_author(self, text: str) -> str:
        """The solution's own path and frames in tracebacks, not its private copy's (kbench.judge.trusted.tracebacks)."""
        return tracebacks.for_author(text, self.copy_path, str(self.solution.path or "solution.py"))

    @contextmanager
    def _phase(self, name: str):
        start = time.monotonic()
        try:
            yield
        finally:  # a phase entered again (timing and baseline, once a round) adds up
            self.phase_seconds[name] = self.phase_seconds.get(name, 0.0) + time.monotonic() - start

    def _verdict(self, status: str, reason: str, candidate: Worker | None, wall: float) -> Verdict:
        trials = self.record["trials"]
        correct = status == "correct"
        errors = [t for t in trials if t.max_abs_error is not None]
        timing = self.record.get("timing") if correct else None
        columns = self.reference_side.columns
        unmeasured = {column: {"runtime_ms": None} for column in columns}
        baselines = self.record["baselines"] or unmeasured
        speedup = self.record["speedup"] or dict.fromkeys(columns)
        return Verdict(
            problem=self.problem.id,
            problem_path=str(self.problem.path),
            problem_sha256=self.problem.sha256,
            solution_path=str(self.solution.path) if self.solution.path else None,
            solution_sha256=self.solution.sha256,
            device=self.device,
            size=self.size,
            dtype=self.dtype,
            status=status,
            correct=correct,
            reason=reason,
            runtime_ms=timing["median_ms"] if timing else None,
            baselines=baselines if correct else unmeasured,
            speedup=speedup if correct else dict.fromkeys(columns),
            speedup_interval=self.record["speedup_interval"] if correct else {},
            speedup_interval_within=self.record["speedup_interval_within"] if correct else {},
            timing=timing,
            device_name=self.reference_side.loaded.get("device_name"),
            trials=trials,
            max_abs_error=max((t.max_abs_error for t in errors), default=None),
            max_rel_error=max((t.max_rel_error for t in errors if t.max_rel_error is not None), default=None),
            tolerance=self.record["tolerance"],
            seeds=self.seeds,
            phase_seconds=self.phase_seconds,
            wall_seconds=wall,
            output_tail=self._for_author(candidate.output.text()) if candidate else "",
            output_bytes=candidate.output.total_bytes if candidate else 0,
            versions=self.reference_side.loaded.get("versions", {}),
            settings=self.reference_side.loaded.get("settings", {}),
            policy=self.policy,
            flags=self.flags + self.reference_side.flags + [
                f"{f.text()} (a style rule, applied once the solution passes its trials)"
                for f in self.style_findings if action(f.rule, self.policy) != "ignore"],
            speed_of_light_ms=self.record.get("speed_of_light_ms"),
            sandbox=self.sandbox.describe() if self.sandbox else NO_SANDBOX,
            handover=sorted(self.handover),
            **self.reference_side.truth.verdict_fields(correct, self.reference_side.correctness),
        )
