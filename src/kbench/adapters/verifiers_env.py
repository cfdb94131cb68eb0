"""A ``verifiers`` environment (Prime Intellect's library): the kbench suite as its dataset, the judge as its
rubric, multi-turn with the judge's feedback.

``load_environment(...)`` returns a ``vf.MultiTurnEnv`` as ``vf-eval``, ``prime-rl`` and the
environments hub expect of an environment module (the classic ``import verifiers as vf`` API, which
verifiers 0.2 and 0.3 ship; 0.4 keeps only its new ``verifiers.v1`` stack, whose episodes run the
model through an installed chat program, and is not supported here yet: docs/adapters.md).

One episode: the first prompt is kbench's own (the template ``kbench run --model`` sends); each reply
is judged as ``kbench eval`` judges it (code taken out by kbench's reply parser), and the judge's
verdict goes back as the next user message in the words of kbench's refinement feedback (status,
reason, speedup per baseline, the run's output tail), up to ``max_turns`` replies. An episode ends
early once a reply is correct under the ``correct`` shape (nothing left to gain). Its reward is the
last reply's: the answer the episode hands over; every turn's reward and status are kept in
``state["kbench"]`` and the rubric's metrics.

A failure that is not the candidate's (the machine, the worker, the service: Reward.value None) is
never a reward: the rollout gets ``state["error"]`` = ``KbenchInfraError`` (a ``vf.InfraError``),
which verifiers retries (``max_retries``) and which stays in the rollout's output for a trainer to drop;
its reward is a placeholder 0.0 that the metric ``kbench_no_reward`` (1.0) marks as no reward.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from kbench.adapters.judging import (
    DEFAULT_SHAPE,
    DEFAULT_TARGET,
    DEFAULT_TEMPLATE,
    Judge,
    Judged,
    problems_named,
    prompt_for,
    refine_instruction,
)
from kbench.rewards import DEFAULT_BASELINE

import verifiers as vf  # noqa: E402  (the extra this module is for: kbench[verifiers])
from datasets import Dataset  # noqa: E402

ENV_ID = "kbench"
STATE_KEY = "kbench"


class KbenchInfraError(vf.InfraError):
    """The judge could not judge (no reward): verifiers retries the rollout, a trainer drops it."""


def dataset_of(problems: Sequence[Any], target: str, template: str) -> Dataset:
    """One row per problem: kbench's first prompt as the question, the problem's id in ``info``."""
    rows = [{"question": prompt_for(p, target, template), "answer": "",
             "info": {"problem": p.id, "level": p.level, "problem_sha256": p.sha256}} for p in problems]
    return Dataset.from_list(rows)


class KbenchEnv(vf.MultiTurnEnv):
    """The multi-turn episode the module docstring describes."""

    def __init__(self, judge: Judge, **kwargs: Any) -> None:
        self.judge = judge
        super().__init__(**kwargs)

    async def setup_state(self, state: vf.State, **kwargs: Any) -> vf.State:
        state[STATE_KEY] = []  # one entry per judged reply
        return state

    async def judge_reply(self, state: vf.State, turn: int) -> dict[str, Any]:
        """Judge the reply of ``turn`` (1-based) once, off the event loop (an evaluation takes seconds)."""
        records = state[STATE_KEY]
        if len(records) >= turn:
            return records[turn - 1]
        completion = state["trajectory"][turn - 1]["completion"]
        problem = state["info"]["problem"]
        judged: Judged = await asyncio.to_thread(self.judge.judge, problem, completion)
        record = {"turn": turn, "value": judged.value, "status": judged.reward.status,
                  "reason": judged.reward.reason, "reward": judged.reward.to_dict(),
                  "extraction": judged.extraction, "feedback": judged.feedback}
        records.append(record)
        if judged.value is None:
            raise KbenchInfraError(f"kbench could not judge turn {turn} of {problem}: {judged.reward.reason}")
        return record

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        turn = len(state["trajectory"])
        record = await self.judge_reply(state, turn)
        if self.judge.shape == "correct" and record["status"] == "correct":
            state["final_env_response"] = [vf.UserMessage(content=record["feedback"])]
            return state["final_env_response"]
        return [vf.UserMessage(content=refine_instruction(turn, record["feedback"]))]


def rubric_for(bound: dict[str, KbenchEnv]) -> vf.Rubric:
    """The judge as the rubric: the last reply's reward (judged here if the episode ended on it).
    ``bound["env"]``: the environment whose judge it uses (set once the environment is made)."""

    async def kbench_reward(state: vf.State, **kwargs: Any) -> float:
        env = bound["env"]
        turns = len(state["trajectory"])
        if not turns:
            return 0.0
        try:
            record = await env.judge_reply(state, turns)
        except KbenchInfraError as exc:
            state["error"] = exc
            return 0.0
        if state.get("error") is not None:
            return 0.0
        return float(record["value"])

    async def kbench_no_reward(state: vf.State, **kwargs: Any) -> float:
        return 1.0 if isinstance(state.get("error"), KbenchInfraError) else 0.0

    async def kbench_correct(state: vf.State, **kwargs: Any) -> float:
        records = state.get(STATE_KEY) or []
        return 1.0 if records and records[-1]["status"] == "correct" else 0.0

    async def kbench_turns_judged(state: vf.State, **kwargs: Any) -> float:
        return float(len(state.get(STATE_KEY) or []))

    rubric = vf.Rubric(funcs=[kbench_reward], weights=[1.0])
    for metric in (kbench_no_reward, kbench_correct, kbench_turns_judged):
        rubric.add_metric(metric)
    return rubric


def load_environment(
    problems: Sequence[str] | str | None = None,
    level: int | None = 1,
    shape: str = DEFAULT_SHAPE,
    baseline: str = DEFAULT_BASELINE,
    max_turns: int = 3,
    target: str = DEFAULT_TARGET,
    template: str = DEFAULT_TEMPLATE,
    device: str | None = None,
    judge_options: dict[str, Any] | None = None,
    service_url: str | None = None,
    token: str | None = None,
    judge: Judge | None = None,
    **kwargs: Any,
) -> vf.MultiTurnEnv:
    """The kbench environment. ``problems``: suite ids (default: the bundled suite's ``level``, all levels
    with None); ``shape``/``baseline``: the reward (kbench.rewards); ``max_turns``: replies per episode;
    ``target``/``template``: kbench's prompt; ``device``/``judge_options``: how to judge here
    (kbench.evaluate's keywords), or ``service_url``/``token``: through ``kbench serve``; ``judge``: a
    ready Judge instead of all of these. Other keywords go to ``vf.MultiTurnEnv``."""
    judge = judge or Judge(shape=shape, baseline=baseline, device=device, options=dict(judge_options or {}),
                           service_url=service_url, token=token)
    chosen = problems_named(problems, None if problems is not None else level)
    bound: dict[str, KbenchEnv] = {}
    env = KbenchEnv(judge, dataset=dataset_of(chosen, target, template), rubric=rubric_for(bound),
                    max_turns=max_turns, env_id=ENV_ID, **kwargs)
    bound["env"] = env
    return env
