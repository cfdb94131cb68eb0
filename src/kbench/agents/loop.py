"""The agent loop: K samples per problem, each refined over N turns, every turn stored.

The wrapper around a model is part of what a run measures, so everything that
shapes what the model is asked is pinned: ``AgentConfig`` (provider, model,
endpoint, prompt templates and their hashes, target, GPU, sampling, the
external agent's program and time limit) is part of the run's config, and the
manifest adds how it was operated (concurrency, retries, timeouts, prices).

A sample is a chain of turns. Turn 1 renders the initial template; turn t > 1
the refinement template, with the previous solution and the judge's verdict on
it (status, reason, speedup, output tail: prompts.format_feedback). Each
request is a single fresh message: nothing but what the prompt carries passes
between turns. After its last turn a sample's outcome is its best judged turn
(score.best_turn).

Generation and evaluation overlap: requests run on a pool of threads (at most
``concurrency`` at once), solutions are judged on a thread per device (one
candidate at a time on each, so timings are not disturbed:
kbench.agents.judging), and the calling thread hands out the work and is the
only writer of the store. Each reply is committed as it arrives and each
verdict as it is known, so a resumed run asks the model only for turns it
does not hold, and judges stored replies without asking again. A request that
failed (``generation_error``) or an evaluation that failed outside the
candidate (``infra_error``, ``problem_error``) ends its sample for this
session, recorded to be retried.
"""

from __future__ import annotations

import json
import queue
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from kbench import judge
from kbench.agents import prompts, repo_agent, reply
from kbench.agents.judging import Judging
from kbench.agents.pool import Job, RequestPool
from kbench.agents.prices import Price
from kbench.agents.prompts import Feedback, PromptError, Template
from kbench.agents.providers import Provider, Reply, Request
from kbench.core.solution import Solution
from kbench.runs.manifest import Manifest, RunConfig, capture, now
from kbench.runs.records import RETRIED_STATUSES, EvaluationRecord, SampleRecord, TurnRecord
from kbench.runs.repo_score import TRACK as REPO_TRACK
from kbench.runs.runner import Evaluate, Listener, Plan, RunError, judge_sample, open_run, tell_evaluating
from kbench.runs.score import best_turn
from kbench.runs.store import Store
from kbench.suite.problem import Problem

DEFAULT_TEMPLATE = "one-shot"
DEFAULT_REFINE_TEMPLATE = "refine"
DEFAULT_TARGET = "triton"
DEFAULT_CONCURRENCY = 4
MAX_STORED_REPLY_CHARS = 1_000_000
NO_PREVIOUS_CODE = "# (no usable code was taken from your previous reply)\n"
FEEDBACK_GIVEN = (
    "each refinement prompt carries the previous solution and the judge's verdict on it: status, reason "
    "(the failed check with its numbers, the error, the rejection rule), speedup per baseline column, and the "
    f"last {prompts.FEEDBACK_DETAIL_CHARS} characters of the run's output; a reply without usable code is fed "
    "back as status no_code with the extraction's message"
)


@dataclass(frozen=True)
class AgentConfig:
    """The generation settings that define a run (stored as ``RunConfig.generation``):
    resuming with other ones would mix two experiments, so the runner refuses."""

    provider: str
    model: str
    endpoint: str | None
    target: str
    gpu: str | None
    template: dict[str, Any]  # template_record()
    refine_template: dict[str, Any] | None  # None with one turn
    sampling: dict[str, Any] | None  # None for an external agent
    agent: dict[str, Any] | None = None  # the external agent: argv, file hashes, version, time limit

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, as the store gives them back (so a stored config compares equal)."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AgentConfig":
        return cls(**{k: data.get(k) for k in cls.__dataclass_fields__})


def template_record(template: Template) -> dict[str, Any]:
    return {"name": template.name, "version": template.version, "sha256": template.sha256,
            "kind": template.kind, "target": template.target, "origin": template.origin}


def choose_template(choice: str, target: str, kind: str) -> Template:
    """A built-in template by name, or a user template from a file (docs/prompts.md)."""
    path = Path(choice)
    template = prompts.load_template(path) if path.is_file() else prompts.get_template(choice, target)
    if template.kind != kind:
        raise PromptError(f"template {choice!r} is a {template.kind!r} template; a {kind!r} one is needed here")
    if template.target not in ("any", target):
        raise PromptError(f"template {choice!r} is for target {template.target!r}, not {target!r}")
    return template


def restore_template(record: dict[str, Any], target: str) -> Template:
    """The template a stored record names (its file read again: a changed file changes the hash)."""
    if record.get("origin", "builtin") == "builtin":
        return prompts.get_template(record["name"], target)
    return prompts.load_template(record["origin"])


def default_gpu(device: str) -> str | None:
    """The GPU the prompts describe: the run's device, when it is one."""
    if device.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    return None


@dataclass(frozen=True)
class Agent:
    """How to ask: the provider, its templates, and how many requests at once."""

    provider: Provider
    template: Template
    refine_template: Template
    target: str = DEFAULT_TARGET
    gpu: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    price: Price | None = None

    def config(self, turns: int) -> AgentConfig:
        provider = self.provider
        return AgentConfig(
            provider=provider.spec.provider,
            model=provider.spec.name,
            endpoint=provider.endpoint,
            target=self.target,
            gpu=self.gpu,
            template=template_record(self.template),
            refine_template=template_record(self.refine_template) if turns > 1 else None,
            sampling=provider.sampling.to_dict() if provider.sampling is not None else None,
            agent=provider.settings(),
        )

    def manifest_entry(self, config: RunConfig) -> dict[str, Any]:
        """Manifest.generation: the provider as operated in this session, and the agent loop."""
        return {
            **self.provider.describe(),
            "target": self.target,
            "gpu": self.gpu,
            "templates": {
                "initial": template_record(self.template),
                "refine": template_record(self.refine_template) if config.turns > 1 else None,
            },
            "agent_loop": {
                "samples": config.samples,
                "turns": config.turns,
                "feedback": FEEDBACK_GIVEN if config.turns > 1 else None,
                "conversation": "stateless: each turn is one request with a single user message",
                "outcome": "a sample's outcome is its best judged turn: the correct one with the highest "
                "speedup over the first baseline column (earliest among equals), else the last",
            },
            "concurrency": self.concurrency,
            "price": self.price.to_dict() if self.price else None,
        }


@dataclass(frozen=True)
class Usage:
    """Requests, tokens and cost, summed over turns."""

    requests: int = 0
    failed_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0  # answered requests whose cost is not known (no price, or no token counts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cost_text(self) -> str:
        """The cost as a reader takes it: "unknown" when no answered request had a price
        (a sum of $0 would read as free), and how many a partial sum leaves out."""
        answered = self.requests - self.failed_requests
        if answered and self.cost_unknown == answered:
            return "cost unknown (no price for these replies)"
        if self.cost_unknown:
            return f"cost ${self.cost_usd:.4f} for {answered - self.cost_unknown} replies, {self.cost_unknown} more " \
                   "of unknown cost"
        return f"cost ${self.cost_usd:.4f}"


def usage(turns: list[TurnRecord]) -> Usage:
    answered = [t for t in turns if t.reply is not None]
    return Usage(
        requests=len(turns),
        failed_requests=len(turns) - len(answered),
        input_tokens=sum(t.input_tokens or 0 for t in turns),
        output_tokens=sum(t.output_tokens or 0 for t in turns),
        cost_usd=sum(t.cost_usd or 0.0 for t in turns),
        cost_unknown=sum(t.cost_usd is None for t in answered),
    )


def usage_by_sample(turns: list[TurnRecord]) -> dict[tuple[str, int], Usage]:
    groups: dict[tuple[str, int], list[TurnRecord]] = {}
    for t in turns:
        groups.setdefault((t.problem_id, t.sample_index), []).append(t)
    return {key: usage(group) for key, group in groups.items()}


# --- the loop -------------------------------------------------------------


@dataclass
class _Sample:
    problem: Problem
    index: int
    turns: dict[int, TurnRecord] = field(default_factory=dict)


class _Loop:
    def __init__(self, store: Store, name: str, config: RunConfig, session: int, agent: Agent,
                 evaluate: Evaluate, listener: Listener | None, executor: judge.LocalExecutor):
        self.store, self.name, self.config, self.session = store, name, config, session
        self.agent, self.evaluate, self.listener, self.executor = agent, evaluate, listener, executor
        self.column = config.baselines[0] if config.baselines else None
        self.to_judge: deque[Judging] = deque()
        self.made: list[EvaluationRecord] = []
        self.events: queue.Queue = queue.Queue()  # replies and verdicts, as they come
        self.pool: RequestPool | None = None
        self.judges: judge.DeviceThreads | None = None
        self.contexts: dict[str, Any] = {}  # the repository track: each task's prompt material, read once

    def run(self, samples: list[_Sample]) -> list[EvaluationRecord]:
        self.pool = RequestPool(self.agent.provider, self.agent.concurrency, self.events)
        self.judges = self.executor.threads(self._judged_on, self.events)
        try:
            for sample in samples:
                self._next_step(sample)
            while self.to_judge or self.pool.pending or self.judges.in_flight:
                # Every idle device judges; the next requests go out while they are busy.
                while self.to_judge and self.judges.idle:
                    job = self.to_judge.popleft()
                    tell_evaluating(self.listener, job.sample.problem.id, job.sample.index, job.turn)
                    self.judges.submit(job)
                event = judge.next_result(self.events)
                if isinstance(event[0], Judging):
                    self._judged(event[0], self.judges.received(event[1]))
                else:
                    self._answered(*self.pool.received(*event))
        finally:
            self.judges.close()
            self.pool.close()
        return self.made

    def _judged_on(self, job: Judging, device: str) -> EvaluationRecord:
        """In a judging thread: the job's verdict on ``device``, as a record."""
        return judge_sample(self.evaluate, replace(self.config, device=device), job.sample.problem, job.solution,
                            self.session)

    def _next_step(self, sample: _Sample) -> None:
        """Continue a sample from what is stored: ask, judge, or finish."""
        for turn in range(1, self.config.turns + 1):
            record = sample.turns.get(turn)
            if record is None or record.status == "generation_error":
                self._ask(sample, turn)
                return
            if not record.final:
                self.to_judge.append(Judging(sample, turn, _turn_solution(sample, record)))
                return
        self._finish(sample)

    def _ask(self, sample: _Sample, turn: int) -> None:
        if self.config.track == REPO_TRACK:  # a task: its statement and files asked, a patch answered
            self.pool.submit(Job(sample, turn, *repo_agent.repo_request(self.agent, sample, turn, self.contexts)))
            return
        problem = sample.problem
        common = dict(problem_source=problem.source, target=self.agent.target, problem_name=problem.id,
                      gpu=self.agent.gpu)
        previous_solution = None
        if turn == 1:
            text, prompt = prompts.render(self.agent.template, **common)
        else:
            earlier = sample.turns[turn - 1]
            previous_solution = next(
                (sample.turns[t].source for t in range(turn - 1, 0, -1) if sample.turns[t].source), NO_PREVIOUS_CODE
            )
            text, prompt = prompts.render(self.agent.refine_template, **common, previous_solution=previous_solution,
                                          feedback=_feedback(earlier), turn=turn)
        text = self.agent.provider.instructions(text, previous_solution)
        request = Request(text, problem.id, problem.source, sample.index, turn, previous_solution)
        self.pool.submit(Job(sample, turn, request, prompt.to_dict()))

    def _answered(self, job: Job, answer: Reply) -> None:
        sample, turn = job.sample, job.turn
        base = dict(
            problem_id=sample.problem.id, sample_index=sample.index, turn=turn, session=self.session,
            prompt=job.request.prompt, prompt_record=job.prompt_record, generated_at=now(),
            generation={**answer.details, "error_kind": answer.error_kind},
        )
        if not answer.ok:
            record = TurnRecord(**base, reply=None, extraction=None, source=None, sha256=None,
                                status="generation_error", reason=f"{answer.error_kind}: {answer.error}")
            self._store_turn(sample, record)
            self._end_for_now(sample, record)
            return
        if self.config.track == REPO_TRACK:
            source, extraction, failure = repo_agent.patch_of(answer)
        else:
            source, extraction, failure = _solution_of(answer)
        cost = answer.cost_usd
        if cost is None and self.agent.price is not None:
            cost = self.agent.price.cost(answer.input_tokens, answer.output_tokens)
        record = TurnRecord(
            **base,
            reply=_bounded(answer.text),
            extraction=extraction,
            source=source,
            sha256=Solution(source).sha256 if source is not None else None,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            cost_usd=cost,
            status="no_code" if failure else None,
            reason=failure or "",
            evaluated_at=now() if failure else "",
        )
        self._store_turn(sample, record)
        if failure:
            self._advance(sample, turn)
        else:
            self.to_judge.append(Judging(sample, turn, _turn_solution(sample, record)))

    def _judged(self, job: Judging, verdict: EvaluationRecord) -> None:
        sample, turn = job.sample, job.turn
        if job.again:
            self._finish_remeasured(sample, sample.turns[turn], verdict)
            return
        record = replace(sample.turns[turn], status=verdict.status, correct=verdict.correct, reason=verdict.reason,
                         runtime_ms=verdict.runtime_ms, speedup=dict(verdict.speedup), verdict=verdict.verdict,
                         evaluated_at=verdict.finished_at)
        self._store_turn(sample, record)
        if record.status in RETRIED_STATUSES:
            self._end_for_now(sample, record)
        else:
            self._advance(sample, turn)

    def _advance(self, sample: _Sample, turn: int) -> None:
        if turn < self.config.turns:
            self._ask(sample, turn + 1)
        else:
            self._finish(sample)

    def _store_turn(self, sample: _Sample, record: TurnRecord) -> None:
        self.store.record_turn(self.name, record)
        sample.turns[record.turn] = record
        if record.status is not None and (turn_finished := getattr(self.listener, "turn_finished", None)):
            turn_finished(record)

    def _end_for_now(self, sample: _Sample, record: TurnRecord) -> None:
        """A failure outside the candidate: the sample's outcome says so, to be retried."""
        outcome = EvaluationRecord(sample.problem.id, sample.index, record.status, False,
                                   f"turn {record.turn}: {record.reason}", session=self.session,
                                   started_at=record.generated_at, finished_at=now(), turn=record.turn)
        self.store.record(self.name, outcome)
        self._made(outcome)

    def _finish(self, sample: _Sample) -> None:
        """The sample's outcome: its best judged turn (solution into samples, verdict into evaluations).

        A best turn chosen among several correct ones by its measured speedup is judged
        again, and that verdict is the outcome: the largest of several noisy speedups is
        biased upward (the winner's curse); an independent measurement of the chosen
        solution is not. A re-measurement that fails outside the candidate is retried."""
        turns = [sample.turns[t] for t in range(1, self.config.turns + 1)]
        best = best_turn(turns, self.column)
        if sum(t.correct for t in turns) > 1 and self.column is not None:
            self.to_judge.append(Judging(sample, best.turn, _turn_solution(sample, best), again=True))
            return
        verdict = best.verdict or {}
        outcome = EvaluationRecord(
            problem_id=sample.problem.id,
            sample_index=sample.index,
            status=best.status or "no_code",
            correct=best.correct,
            reason=best.reason,
            runtime_ms=best.runtime_ms,
            baselines={c: (b or {}).get("runtime_ms") for c, b in (verdict.get("baselines") or {}).items()},
            speedup=dict(best.speedup),
            verdict=best.verdict,
            session=self.session,
            started_at=turns[0].generated_at,
            finished_at=now(),
            turn=best.turn,
        )
        self._finish_with(sample, best, outcome)

    def _finish_remeasured(self, sample: _Sample, best: TurnRecord, remeasured: EvaluationRecord) -> None:
        turns = [sample.turns[t] for t in range(1, self.config.turns + 1)]
        selection = {"turn": best.turn, "correct_turns": sum(t.correct for t in turns),
                     "selected_speedup": dict(best.speedup)}
        outcome = replace(remeasured, turn=best.turn, started_at=turns[0].generated_at,
                          verdict={**(remeasured.verdict or {}), "selection": selection})
        if outcome.status in RETRIED_STATUSES:
            self.store.record(self.name, outcome)
            self._made(outcome)
            return
        self._finish_with(sample, best, outcome)

    def _finish_with(self, sample: _Sample, best: TurnRecord, outcome: EvaluationRecord) -> None:
        chosen = SampleRecord(sample.problem.id, sample.index, f"sample_{sample.index}/turn_{best.turn}",
                              self.config.solutions, best.sha256 or "", best.source or "")
        self.store.finish_sample(self.name, chosen, outcome)
        self._made(outcome)

    def _made(self, outcome: EvaluationRecord) -> None:
        self.made.append(outcome)
        if self.listener:
            self.listener.finished(outcome)


def _turn_solution(sample: _Sample, record: TurnRecord) -> SampleRecord:
    return SampleRecord(sample.problem.id, sample.index, f"turn_{record.turn}.py",
                        f"generated/{sample.problem.id}/sample_{sample.index}/turn_{record.turn}.py",
                        record.sha256 or "", record.source or "")


def _feedback(record: TurnRecord) -> Feedback:
    if record.verdict is not None:
        return Feedback.from_verdict(record.verdict)
    return Feedback(record.status or "unknown", record.reason, record.speedup or None)


def _bounded(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_STORED_REPLY_CHARS:
        return text
    return text[:MAX_STORED_REPLY_CHARS] + f"\n[... {len(text) - MAX_STORED_REPLY_CHARS} more characters not stored]"


def _solution_of(answer: Reply) -> tuple[str | None, dict[str, Any], str | None]:
    """The solution to judge, the extraction's record, and why there is none (or None)."""
    if answer.solution is not None:
        return answer.solution, {"ok": True, "how": "file", "message": "the file the agent wrote"}, None
    if not answer.answer_in_text:
        return None, {"ok": False, "how": "file", "message": "no solution file"}, "the agent left no solution.py"
    extraction = reply.extract(answer.text)
    if extraction.ok or (extraction.failure == "unparsable" and extraction.code):
        # An unparsable block still goes to the judge: its compile_error is the feedback the model needs.
        return extraction.code, extraction.to_dict(), None
    return None, extraction.to_dict(), f"{extraction.failure}: {extraction.message}"


def execute(
    store: Store,
    name: str,
    config: RunConfig,
    plan: Plan,
    agent: Agent,
    *,
    evaluate: Evaluate = judge.evaluate,
    listener: Listener | None = None,
    manifest: Manifest | None = None,
    devices: list[str] | None = None,
) -> list[EvaluationRecord]:
    """Generate and judge what run ``name`` has not finished; the sample outcomes made in
    this session. Raises RunError when the run exists with another config, ProviderError
    when the provider cannot go on; an interruption keeps every stored reply and verdict.
    ``devices``: where solutions are judged, one at a time on each (default: the run's)."""
    if config.source == "replay":
        raise RunError("a replay run has no agent: use kbench.runs.runner.execute")
    executor = judge.LocalExecutor(devices or [config.device])  # checks them, and says how in the manifest
    manifest = manifest or capture(config, agent.manifest_entry(config), executor.describe())
    session = open_run(store, name, config, plan, manifest)
    finished = {(e.problem_id, e.sample_index): e for e in store.evaluations(name) if e.status not in RETRIED_STATUSES}
    stored: dict[tuple[str, int], dict[int, TurnRecord]] = {}
    for record in store.turns(name):
        stored.setdefault((record.problem_id, record.sample_index), {})[record.turn] = record
    samples = [
        _Sample(problem, s.index, stored.get((problem.id, s.index), {}))
        for problem in plan.problems
        for s in plan.samples_of(problem.id)
        if (problem.id, s.index) not in finished
    ]
    if listener:
        listener.started(len(finished) + len(samples), list(finished.values()))
    return _Loop(store, name, config, session, agent, evaluate, listener, executor).run(samples)
