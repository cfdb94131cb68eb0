"""Reward functions in the forms TRL's GRPOTrainer and veRL call them.

TRL: ``GRPOTrainer(reward_funcs=[KbenchReward(...)], train_dataset=...)``. TRL calls the function with
``prompts``, ``completions``, ``completion_ids`` and every dataset column as a list (one entry per
completion), plus ``trainer_state``, ``log_extra`` and ``log_metric``; it wants one float (or None) per
completion. The dataset needs a column naming each row's kbench problem (``problem_id``; rows from
``trl_rows``). **None** is what an infrastructure failure becomes: TRL turns it into NaN, and a
completion for which every reward function gave None is "unscorable": left out of its group's mean and
standard deviation, its advantage set to 0, so it moves nothing (trl 1.16, ``GRPOTrainer._calculate_rewards``
and ``_compute_advantages``). A 0 there would teach the policy that its kernel was wrong when the machine
failed. Each batch also logs the verdict status per completion (``log_extra("kbench_status", ...)``) and
the share of completions with no reward (``log_metric("kbench/no_reward", ...)``).

veRL: ``custom_reward_function.path=<this file>``, ``custom_reward_function.name=compute_score``: veRL calls
``compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)`` with the problem's
id as ``ground_truth`` (rows from ``verl_rows``). veRL has no way for a reward function to drop a sample:
its score goes straight into the token-level reward, and a NaN there spreads through the group's advantage
to the loss. So an infrastructure failure **raises** ``InfrastructureFailure`` by default (the step fails
loudly rather than training on a guess); ``on_infra=<float>`` is the explicit choice of a value in its place,
and the dict returned always says whether the score is a reward (``kbench_reward_valid``).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable, Sequence

from kbench.adapters.judging import (
    DEFAULT_SHAPE,
    DEFAULT_TARGET,
    DEFAULT_TEMPLATE,
    AdapterError,
    Judge,
    Judged,
    problems_named,
    prompt_for,
)
from kbench.rewards import DEFAULT_BASELINE

PROBLEM_COLUMN = "problem_id"
DATA_SOURCE = "kbench"


class InfrastructureFailure(RuntimeError):
    """The judge could not judge a completion: not the policy's fault, so no reward is given for it."""


def trl_rows(problems: Sequence[str] | str | None = None, level: int | None = 1, target: str = DEFAULT_TARGET,
             template: str = DEFAULT_TEMPLATE) -> list[dict[str, Any]]:
    """A GRPO dataset's rows (``datasets.Dataset.from_list(trl_rows(...))``): kbench's first prompt as a
    conversational ``prompt``, and the problem's id in ``problem_id``."""
    return [{"prompt": [{"role": "user", "content": prompt_for(p, target, template)}], PROBLEM_COLUMN: p.id}
            for p in problems_named(problems, None if problems is not None else level)]


def verl_rows(problems: Sequence[str] | str | None = None, level: int | None = 1, target: str = DEFAULT_TARGET,
              template: str = DEFAULT_TEMPLATE) -> list[dict[str, Any]]:
    """veRL's RL dataset rows (write them to parquet): ``data_source``, a chat ``prompt``, and the problem's id
    as ``reward_model.ground_truth``, which veRL hands ``compute_score``."""
    return [{"data_source": DATA_SOURCE, "prompt": [{"role": "user", "content": prompt_for(p, target, template)}],
             "ability": "gpu-kernels", "reward_model": {"style": "rule", "ground_truth": p.id},
             "extra_info": {"problem_id": p.id, "level": p.level}}
            for p in problems_named(problems, None if problems is not None else level)]


class KbenchReward:
    """A TRL reward function (module docstring). ``judge``: how to judge (kbench.adapters.Judge); or the same
    settings as keywords: ``shape``, ``baseline``, ``device``, ``judge_options`` (kbench.evaluate's keywords),
    ``service_url``/``token`` (the reward service)."""

    def __init__(self, judge: Judge | None = None, *, shape: str = DEFAULT_SHAPE, baseline: str = DEFAULT_BASELINE,
                 device: str | None = None, judge_options: dict[str, Any] | None = None,
                 service_url: str | None = None, token: str | None = None,
                 problem_column: str = PROBLEM_COLUMN) -> None:
        self.judge = judge or Judge(shape=shape, baseline=baseline, device=device,
                                    options=dict(judge_options or {}), service_url=service_url, token=token)
        self.problem_column = problem_column
        self.__name__ = f"kbench_{self.judge.shape}"  # TRL names the reward's logged columns after it
        self.last: list[Judged] = []  # the batch just judged, for a caller that wants the full rewards

    def __call__(self, prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None,
                 log_extra: Callable[[str, list], None] | None = None,
                 log_metric: Callable[[str, float], None] | None = None, **columns: Any) -> list[float | None]:
        completions = list(completions or [])
        problems = columns.get(self.problem_column)
        if problems is None:
            raise AdapterError(f"the dataset has no {self.problem_column!r} column naming each row's kbench problem "
                               f"(columns given: {', '.join(sorted(columns)) or 'none'}); make rows with trl_rows()")
        if len(problems) != len(completions):
            raise AdapterError(f"{len(completions)} completions but {len(problems)} {self.problem_column} values")
        self.last = self.judge.judge_many(list(zip(problems, completions)))
        values = [j.value for j in self.last]
        if log_extra is not None:
            log_extra("kbench_status", [j.reward.status for j in self.last])
            log_extra("kbench_reason", [j.reward.reason or "" for j in self.last])
        if log_metric is not None and values:
            log_metric("kbench/no_reward", sum(v is None for v in values) / len(values))
        return values


_JUDGES: dict[tuple, Judge] = {}
_JUDGES_LOCK = threading.Lock()


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict[str, Any] | None = None,
                  *, shape: str = DEFAULT_SHAPE, baseline: str = DEFAULT_BASELINE, device: str | None = None,
                  service_url: str | None = None, token: str | None = None, on_infra: str | float = "raise",
                  judge: Judge | None = None, **judge_options: Any) -> dict[str, Any]:
    """veRL's reward function (module docstring): the reward of ``solution_str`` for the kbench problem
    ``ground_truth`` (or ``extra_info["problem_id"]``), as a dict whose ``score`` veRL uses and whose other
    keys it logs. Other keywords (veRL's ``reward_kwargs``) go to kbench.evaluate."""
    problem = ground_truth if isinstance(ground_truth, str) and ground_truth else (extra_info or {}).get("problem_id")
    if not problem:
        raise AdapterError(f"no kbench problem for a {data_source!r} sample: give its id as ground_truth "
                           "(reward_model.ground_truth, rows from verl_rows())")
    if judge is None:
        key = (shape, baseline, device, service_url, token, json.dumps(judge_options, sort_keys=True, default=str))
        with _JUDGES_LOCK:  # one Judge (and one service client) per setting, across veRL's calls
            judge = _JUDGES.get(key) or _JUDGES.setdefault(
                key, Judge(shape=shape, baseline=baseline, device=device, options=dict(judge_options),
                           service_url=service_url, token=token))
    judged = judge.judge(problem, solution_str)
    value = judged.value
    if value is None:
        if on_infra == "raise":
            raise InfrastructureFailure(f"kbench could not judge a sample of {problem}: {judged.reward.reason}")
        try:
            value = float(on_infra)
        except (TypeError, ValueError):
            raise AdapterError(f"on_infra must be 'raise' or a number, not {on_infra!r}") from None
    return {"score": float(value), "kbench_reward_valid": float(judged.value is not None),
            "kbench_correct": float(judged.reward.status == "correct")}
