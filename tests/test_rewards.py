"""Reward shapes read verdicts as docs/rewards.md defines them: zeros carry their reason, infrastructure
failures are never rewards, speed is read on the interval's lower bound. Verdicts are built by hand
(no evaluation runs), so the whole file takes well under a second."""

from __future__ import annotations

import json

import pytest

from kbench import Verdict
from kbench.rewards import INFRA_STATUSES, SHAPES, Reward, failure_reward, reward_of, shape_named


def verdict(status: str = "correct", reason: str = "5 of 5 trials match", *, speedup: float | None = 1.3,
            interval: list[float] | None = (1.2, 1.4), column: str = "eager") -> Verdict:
    return Verdict(
        problem="level1/relu", problem_path="/x/relu.py", problem_sha256="p" * 64, solution_path=None,
        solution_sha256="s" * 64, device="cpu", size="small", status=status, correct=status == "correct",
        reason=reason, speedup={column: speedup}, speedup_interval={column: list(interval)} if interval else {},
        seeds={"init": 7, "trials": [1, 2]}, sandbox={"kind": "bubblewrap"}, versions={"torch": "2.13"},
        settings={"cudnn.benchmark": False}, device_name="CPU",
    )


def test_correct_shape_is_one_or_zero_with_reason():
    assert reward_of(verdict(), "correct").value == 1.0
    assert reward_of(verdict(), "correct").reason is None
    wrong = reward_of(verdict("incorrect", "trial 2: max abs error 0.5 > 1e-4"), "correct")
    assert (wrong.value, wrong.status) == (0.0, "incorrect")
    assert wrong.reason == "incorrect: trial 2: max abs error 0.5 > 1e-4"


def test_speedup_is_the_interval_lower_bound_and_zero_when_not_correct():
    reward = reward_of(verdict(), "speedup", baseline="eager")
    assert (reward.value, reward.basis, reward.interval, reward.speedup) == (1.2, "interval_low", (1.2, 1.4), 1.3)
    assert reward.baseline == "eager" and reward.reason is None
    cheat = reward_of(verdict("rejected", "side-stream: work on a stream the timer does not see\nevidence: 3 ms",
                              speedup=30.0, interval=(29.0, 31.0)), "speedup")
    assert cheat.value == 0.0
    assert cheat.reason == "rejected: side-stream: work on a stream the timer does not see evidence: 3 ms"


def test_speedup_without_an_interval_falls_back_to_the_median_and_says_so():
    reward = reward_of(verdict(interval=None), "speedup")
    assert (reward.value, reward.basis, reward.interval) == (1.3, "median", None)


def test_a_correct_verdict_without_the_timing_a_shape_needs_is_no_reward():
    untimed = reward_of(verdict(speedup=None, interval=None), "fast_1.0")
    assert untimed.value is None and not untimed.is_reward
    assert "no speedup over 'eager'" in untimed.reason
    other_column = reward_of(verdict(), "speedup", baseline="compile")
    assert other_column.value is None and "timed columns: eager" in other_column.reason
    assert reward_of(verdict(speedup=None, interval=None), "correct").value == 1.0


@pytest.mark.parametrize("name, low, expected", [("fast_1.0", 1.2, 1.0), ("fast_1.0", 0.99, 0.0), ("fast_2.0", 1.9, 0.0),
                                                 ("fast_1.5", 1.6, 1.0), ("fast_0.0", 0.01, 1.0), ("fast_1.25", 1.3, 1.0)])
def test_fast_p_thresholds_on_the_lower_bound(name, low, expected):
    reward = reward_of(verdict(speedup=low + 0.1, interval=(low, low + 0.2)), name)
    assert reward.value == expected
    assert (reward.reason is None) == (expected > 0)
    if not expected:
        assert reward.reason.startswith("correct, but the speedup over eager is") and "not above" in reward.reason


def test_shapes_by_name():
    assert {"correct", "speedup", "fast_1.0", "fast_2.0"} <= set(SHAPES)
    assert shape_named("fast_1").name == "fast_1.0" and shape_named("fast_0.5").threshold == 0.5
    for bad in ("fastest", "fast_-1", "fast_x", "", "speed"):
        with pytest.raises(ValueError, match="unknown reward shape"):
            shape_named(bad)


@pytest.mark.parametrize("status", sorted(INFRA_STATUSES))
def test_infrastructure_failures_are_never_rewards(status):
    reward = failure_reward(status, "Traceback (most recent call last):\n  File x\nOSError: lost worker", "speedup")
    assert reward.value is None and status in reward.reason and "OSError: lost worker" in reward.reason
    assert "\n" not in reward.reason
    as_dict = verdict().to_dict() | {"status": status, "correct": False, "reason": "machine fault"}
    assert reward_of(as_dict, "correct").value is None


def test_nothing_to_judge_is_a_zero_and_unknown_statuses_are_refused():
    assert failure_reward("no_code", "no code block", "correct").value == 0.0
    with pytest.raises(ValueError, match="unknown status"):
        failure_reward("exploded", "?")


def test_round_trip_through_json_and_provenance():
    reward = reward_of(verdict(), "fast_1.0")
    data = json.loads(json.dumps(reward.to_dict(), allow_nan=False))
    assert Reward.from_dict(data) == reward
    provenance = reward.provenance
    assert provenance["kbench"] and provenance["seeds"]["init"] == 7 and provenance["sandbox"]["kind"] == "bubblewrap"
    assert provenance["device"] == {"device": "cpu", "name": "CPU"} and provenance["judge"]["size"] == "small"
    assert reward_of(verdict().to_dict(), "fast_1.0") == reward  # a stored verdict's dict gives the same reward
    with pytest.raises(ValueError, match="not fields"):
        Reward.from_dict(data | {"valeu": 1})


def test_reasons_are_one_bounded_line():
    reward = reward_of(verdict("runtime_error", "x" * 5000 + "\n" + "y"), "correct")
    assert len(reward.reason) <= 400 and "\n" not in reward.reason
