"""An inspect_ai task: ``inspect eval`` over kbench problems, the judge as its scorer.

    inspect eval src/kbench/adapters/inspect_task.py@kbench --model openai/gpt-4o -T problems=level1/relu -T turns=3

Each sample is one problem with kbench's first prompt; the solver asks the model, and with ``turns`` > 1
feeds the judge's verdict back (kbench's refinement feedback) and asks again; the scorer judges the last
reply as ``kbench eval`` does (code taken out by kbench's reply parser) and scores it by the reward shape
(``correct``, ``speedup``, ``fast_P``). The Score keeps the whole Reward (status, reason, interval,
provenance) in its metadata and the reason for a zero in its explanation.

A failure that is not the candidate's (Reward.value None) is ``Score.unscored``: inspect keeps the sample
with its reason and leaves it out of every metric and reducer (NaN is inspect's unscored sentinel), so a
broken machine neither lowers nor raises a model's mean.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any, Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver

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

# The solver's judgements by (problem, reply), taken by the scorer so that it does not judge the same reply twice.
_JUDGED: dict[str, Judged] = {}


def samples_of(problems: Sequence[str] | str | None, level: int | None, target: str, template: str) -> list[Sample]:
    return [Sample(input=prompt_for(p, target, template), target=p.id, id=p.id.replace("/", "__"),
                   metadata={"problem_id": p.id, "level": p.level, "problem_sha256": p.sha256})
            for p in problems_named(problems, None if problems is not None else level)]


def _key(problem: str, completion: str) -> str:
    return hashlib.sha256(f"{problem}\0{completion}".encode()).hexdigest()


async def _judge(judge: Judge, state: TaskState, keep: bool) -> Judged:
    """The judgement of the state's last reply (``keep``: for the scorer to take)."""
    problem = state.metadata["problem_id"]
    completion = state.output.completion if state.output else ""
    key = _key(problem, completion)
    judged = _JUDGED.pop(key, None) or await asyncio.to_thread(judge.judge, problem, completion)  # seconds
    if keep:
        _JUDGED[key] = judged
    return judged


@solver
def refine_with_judge(judge: Judge, turns: int = 1):
    """Ask; then, up to ``turns`` replies in all, give the model the judge's verdict and ask again. Stops
    early on a reply the judge could not judge (the scorer says so) and, under the ``correct`` shape,
    on a correct one."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for turn in range(1, turns + 1):
            state = await generate(state)
            if turn == turns:
                break
            judged = await _judge(judge, state, keep=True)  # the final reply if the episode stops here
            if judged.value is None or (judge.shape == "correct" and judged.reward.status == "correct"):
                break
            _JUDGED.pop(_key(state.metadata["problem_id"], state.output.completion), None)
            state.messages.append(ChatMessageUser(content=refine_instruction(turn, judged.feedback)))
        return state

    return solve


@scorer(metrics=[mean(), stderr()])
def kbench_scorer(judge: Judge | None = None, shape: str = DEFAULT_SHAPE, baseline: str = DEFAULT_BASELINE,
                  device: str | None = None, judge_options: dict[str, Any] | None = None,
                  service_url: str | None = None, token: str | None = None):
    """The judge as a scorer (module docstring)."""
    judge = judge or Judge(shape=shape, baseline=baseline, device=device, options=dict(judge_options or {}),
                           service_url=service_url, token=token)

    async def score(state: TaskState, target: Target) -> Score:
        judged = await _judge(judge, state, keep=False)
        reward = judged.reward
        metadata = {"reward": reward.to_dict(), "extraction": judged.extraction}
        if reward.value is None:
            return Score.unscored(reason=reward.reason, explanation=reward.reason, answer=reward.status,
                                  metadata=metadata)
        return Score(value=reward.value, answer=reward.status, explanation=reward.reason or reward.status,
                     metadata=metadata)

    return score


@task
def kbench(problems: str | list[str] | None = None, level: int | None = 1, shape: str = DEFAULT_SHAPE,
           baseline: str = DEFAULT_BASELINE, turns: int = 1, target: str = DEFAULT_TARGET,
           template: str = DEFAULT_TEMPLATE, device: str | None = None, judge_options: dict[str, Any] | None = None,
           service_url: str | None = None, token: str | None = None, judge: Judge | None = None) -> Task:
    """kbench problems as an inspect task. ``problems``: suite ids, comma-separated on the command line
    (default: the bundled suite's ``level``); ``shape``/``baseline``: the reward; ``turns``: replies per
    sample, the judge's feedback between them; ``device``/``judge_options`` (kbench.evaluate's keywords) to
    judge here, or ``service_url``/``token`` for ``kbench serve``."""
    if isinstance(problems, str):
        problems = [p.strip() for p in problems.split(",") if p.strip()]
    judge = judge or Judge(shape=shape, baseline=baseline, device=device, options=dict(judge_options or {}),
                           service_url=service_url, token=token)
    return Task(dataset=MemoryDataset(samples_of(problems, level, target, template), name="kbench"),
                solver=refine_with_judge(judge, turns), scorer=kbench_scorer(judge=judge))
