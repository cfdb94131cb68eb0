"""One judge for every adapter: a model's completion in, a Reward (and the feedback for its next turn) out.

Each training library wants the same three things from kbench: the code taken out of a completion as
kbench's own reply parser takes it (``kbench.agents.reply.extract``: the block that defines ModelNew,
not blindly the first), a reward by a named shape (``kbench.rewards``), and, for multi-turn
environments, the judge's feedback in the words kbench's own agent loop gives a model
(``kbench.agents.prompts.format_feedback``). ``Judge`` holds how to get them: in this process
(``kbench.evaluate``, on ``device``) or through the reward service (``service_url``: ``kbench serve``),
so that an adapter never judges differently from ``kbench eval`` or ``kbench run``.

What the adapters never do is turn a failure that is not the candidate's into a number: such a
Reward's ``value`` is None, and each adapter says what None becomes in its library (docs/adapters.md).
A completion with no code is the model's fault, not the machine's: ``no_code`` or ``no_model_new``,
reward 0, with the parser's reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from kbench.agents import prompts, reply
from kbench.agents.prompts import Feedback
from kbench.core.solution import Solution
from kbench.rewards import DEFAULT_BASELINE, Reward, failure_reward, reward_of, shape_named
from kbench.suite import find_problem, suite_problems
from kbench.suite.problem import Problem, ProblemError

DEFAULT_SHAPE = "speedup"
DEFAULT_TARGET = "triton"
DEFAULT_TEMPLATE = "one-shot"


class AdapterError(ValueError):
    """An adapter was set up with something it cannot use (an unknown problem, shape or template)."""


@dataclass(frozen=True)
class Judged:
    """One completion judged: the reward, the verdict's plain form when judged here (None through the
    service or when nothing was judged), what the parser made of the completion, and the feedback text
    for the model's next turn."""

    reward: Reward
    verdict: dict[str, Any] | None
    extraction: dict[str, Any]
    feedback: str

    @property
    def value(self) -> float | None:
        return self.reward.value


def code_of(completion: Any) -> str:
    """The text of a completion as the libraries give it: a string, a chat message (a dict or an object
    with ``role`` and ``content``), or a list of them (the assistant's messages joined in order)."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, (list, tuple)):
        return "\n\n".join(code_of(m) for m in completion if _role(m) in (None, "assistant"))
    content = completion.get("content") if isinstance(completion, Mapping) else getattr(completion, "content", None)
    if content is None and not isinstance(completion, Mapping) and not hasattr(completion, "content"):
        return str(completion)
    if isinstance(content, (list, tuple)):  # content parts: keep the text ones
        return "\n".join(str(_field(part, "text") or "") for part in content)
    return "" if content is None else str(content)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _role(message: Any) -> str | None:
    return None if isinstance(message, str) else _field(message, "role")


@dataclass
class Judge:
    """How an adapter judges. ``shape``/``baseline``: the reward (kbench.rewards.SHAPES). Locally:
    ``device`` (None: kbench's default, a GPU when there is one) and ``options``, the keyword
    arguments of ``kbench.evaluate`` (``trials``, ``timeout``, ``measure_time``, ``policy``, ...);
    ``evaluate`` is the function called (kbench.evaluate unless given: a test or a caller's own
    pool may wrap it). Through the service: ``service_url`` and ``token`` (``options`` and
    ``device`` are then the service's to choose)."""

    shape: str = DEFAULT_SHAPE
    baseline: str = DEFAULT_BASELINE
    device: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    service_url: str | None = None
    token: str | None = None
    evaluate: Callable[..., Any] | None = None
    client: Any = None  # a RewardClient (made from service_url on first use)

    def __post_init__(self) -> None:
        try:
            shape_named(self.shape)
        except ValueError as exc:
            raise AdapterError(str(exc)) from None

    @property
    def where(self) -> str:
        return f"service {self.service_url}" if self.service_url or self.client is not None else "local"

    def judge(self, problem: str | Problem, completion: Any) -> Judged:
        """Judge one completion (any form ``code_of`` reads) for ``problem`` (a suite id or a Problem).
        Never raises for what the completion holds or for a failure of the machine: those are Rewards."""
        problem_id = problem.id if isinstance(problem, Problem) else str(problem)
        extraction = reply.extract(code_of(completion))
        summary = extraction.to_dict()
        if not (extraction.ok or (extraction.failure == "unparsable" and extraction.code)):
            # An unparsable block still goes to the judge (its compile_error is the feedback); nothing else does.
            why = extraction.message if extraction.failure == "no_code" else f"{extraction.failure}: {extraction.message}"
            reward = failure_reward("no_code", why, self.shape, self.baseline, problem=problem_id)
            return Judged(reward, None, summary, feedback_text(reward, None))
        source = extraction.code or ""
        if self.service_url or self.client is not None:
            return self._judge_remote(problem_id, source, summary)
        return self._judge_local(problem, problem_id, source, summary)

    def judge_many(self, items: Sequence[tuple[str | Problem, Any]]) -> list[Judged]:
        """Judge (problem, completion) pairs, in order. Locally one after another on ``device``; through the
        service in one batch, which the service spreads over its devices."""
        if not (self.service_url or self.client is not None):
            return [self.judge(problem, completion) for problem, completion in items]
        judged: list[Judged | None] = []
        sent: list[tuple[int, str, str, dict[str, Any]]] = []  # (index, problem id, source, extraction)
        for index, (problem, completion) in enumerate(items):
            problem_id = problem.id if isinstance(problem, Problem) else str(problem)
            extraction = reply.extract(code_of(completion))
            if extraction.ok or (extraction.failure == "unparsable" and extraction.code):
                sent.append((index, problem_id, extraction.code or "", extraction.to_dict()))
                judged.append(None)
            else:
                judged.append(self.judge(problem_id, completion))  # no code: answered here, nothing sent
        if sent:
            try:
                rewards = self._client().judge_many([(p, source) for _, p, source, _ in sent], shape=self.shape,
                                                    baseline=self.baseline)
            except Exception as exc:  # the whole batch unjudged: no rewards, never zeros
                rewards = [self._unreachable(p, source, exc) for _, p, source, _ in sent]
            for (index, _, _, summary), reward in zip(sent, rewards):
                judged[index] = Judged(reward, None, summary, feedback_text(reward, None))
        return [j for j in judged if j is not None]

    def _judge_local(self, problem: str | Problem, problem_id: str, source: str, summary: dict[str, Any]) -> Judged:
        sha = hashlib.sha256(source.encode()).hexdigest()
        evaluate = self.evaluate
        if evaluate is None:
            from kbench.judge import evaluate  # the judge's own entry point, as kbench eval calls it
        try:
            verdict = evaluate(problem, Solution(source=source), self.device, **self.options)
        except ProblemError as exc:
            reward = failure_reward("problem_error", str(exc), self.shape, self.baseline, problem_id, sha)
            return Judged(reward, None, summary, feedback_text(reward, None))
        except (ValueError, TypeError) as exc:  # a setting kbench.evaluate refuses: the caller's mistake
            raise AdapterError(f"kbench.evaluate refused the adapter's settings: {exc}") from exc
        except Exception as exc:  # the machine, the worker, the sandbox: never the candidate's reward
            reward = failure_reward("infra_error", f"{type(exc).__name__}: {exc}", self.shape, self.baseline,
                                    problem_id, sha)
            return Judged(reward, None, summary, feedback_text(reward, None))
        reward = reward_of(verdict, self.shape, self.baseline)
        plain = verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)
        return Judged(reward, plain, summary, feedback_text(reward, plain))

    def _client(self) -> Any:
        if self.client is None:
            from kbench.serve.client import RewardClient  # only where a service is named

            self.client = RewardClient(self.service_url, token=self.token)
        return self.client

    def _unreachable(self, problem_id: str, source: str, exc: Exception) -> Reward:
        return failure_reward("infra_error", f"reward service {self.where}: {type(exc).__name__}: {exc}", self.shape,
                              self.baseline, problem_id, hashlib.sha256(source.encode()).hexdigest())

    def _judge_remote(self, problem_id: str, source: str, summary: dict[str, Any]) -> Judged:
        try:
            reward = self._client().judge(problem_id, source, shape=self.shape, baseline=self.baseline)
        except Exception as exc:  # unreachable, busy, refused: the service's answer is no reward, never a zero
            reward = self._unreachable(problem_id, source, exc)
        return Judged(reward, None, summary, feedback_text(reward, None))


def feedback_text(reward: Reward, verdict: Mapping[str, Any] | None) -> str:
    """The judge's answer as kbench's refinement prompt states it (status, reason, speedup per column, the
    run's output tail), from the verdict when there is one, else from the reward."""
    if verdict is not None:
        feedback = Feedback.from_verdict(verdict)
    else:
        speedup = {reward.baseline: reward.speedup} if reward.baseline and reward.speedup is not None else None
        feedback = Feedback(reward.status, reward.reason or "", speedup)
    return prompts.format_feedback(feedback)


def problems_named(problems: Sequence[str] | str | None = None, level: int | None = None) -> list[Problem]:
    """The problems an adapter's dataset holds: the given suite ids (or paths), else the bundled suite
    (one level, or all). AdapterError naming the one that is not found."""
    if problems is None:
        return suite_problems(level)
    names = [problems] if isinstance(problems, str) else list(problems)
    found = []
    for name in names:
        try:
            found.append(find_problem(name))
        except ProblemError as exc:
            raise AdapterError(f"problem {name!r}: {exc}") from None
    return found


def prompt_for(problem: Problem, target: str = DEFAULT_TARGET, template: str = DEFAULT_TEMPLATE,
               gpu: str | None = None) -> str:
    """The first prompt for ``problem``, kbench's own template (the one ``kbench run --model`` sends)."""
    try:
        text, _ = prompts.render(template, problem_source=problem.source, target=target, problem_name=problem.id,
                                 gpu=gpu)
    except prompts.PromptError as exc:
        raise AdapterError(str(exc)) from None
    return text


def refine_instruction(turn: int, feedback: str) -> str:
    """The environment's message after a judged turn: the judge's feedback and what to do with it."""
    return (f"The judge's verdict on your solution (turn {turn}):\n\n{feedback}\n\n"
            "Reply with a corrected or faster complete solution: one fenced Python block defining "
            "class ModelNew, as before.")
