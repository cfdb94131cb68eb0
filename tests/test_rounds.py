"""How many rounds an evaluation times: the required ones, then more until the columns settle, never
a timeout verdict for the further rounds the judge chose (kbench.judge.protocol.rounds)."""

import time

import pytest

from kbench.judge.protocol.rounds import RoundPlan
from kbench.judge.protocol.timing import TimingSettings

ADAPTIVE = TimingSettings(rounds=3, max_rounds=8, budget_seconds=3.0, target_speedup_error=0.0025)
SCATTERED = {"eager": [1.0, 1.3, 0.7]}  # never settles at 0.25%


def plan_with(seconds_left: float, round_seconds: float, rounds_done: int) -> RoundPlan:
    now = time.monotonic()
    return RoundPlan(ADAPTIVE, now + seconds_left, "cuda", started=[now - round_seconds] * rounds_done)


def test_each_round_gets_its_share_of_the_budget_or_what_is_left_over_the_rounds_that_may_follow():
    plan = plan_with(1000.0, 0.0, 0)
    assert plan.most == 8 and plan.start(0) == pytest.approx(1.0)  # 3 s over the 3 required rounds
    short = plan_with(4.0, 0.0, 0)
    assert short.start(0) == pytest.approx(4.0 / 8, rel=0.01)  # 8 rounds may follow
    assert plan_with(-1.0, 0.0, 0).start(0) < 0  # past the deadline: the caller's timeout verdict


def test_further_rounds_stop_when_another_would_not_end_in_time_and_the_required_ones_never_do():
    assert not plan_with(100.0, 10.0, 3).enough([1.0] * 3, SCATTERED)  # time for another: go on
    assert plan_with(5.0, 10.0, 3).enough([1.0] * 3, SCATTERED)  # another 10 s round would not end in time
    assert not plan_with(5.0, 10.0, 2).enough([1.0] * 2, {"eager": [1.0, 1.3]})  # a required round: it runs


def test_settled_columns_stop_the_rounds_whatever_the_time():
    assert plan_with(1000.0, 1.0, 3).enough([1.0] * 3, {"eager": [1.0, 1.0001, 0.9999]})


def test_a_progress_display_says_when_the_rounds_may_end_sooner():
    assert plan_with(1.0, 0.0, 0).label(0) == "round 1 of at most 8"
    assert RoundPlan(TimingSettings(rounds=3), 0.0, "cuda").label(2) == "round 3 of 3"


def test_only_the_first_round_warms_up_for_a_while_every_round_takes_its_warmup_calls():
    settings = TimingSettings(rounds=3, warmup_calls=3, warmup_seconds=0.1, budget_seconds=3.0)
    plan = RoundPlan(settings, time.monotonic() + 1000.0, "cuda")
    first, second = plan.round_settings(0), plan.round_settings(1)
    assert (first.warmup_seconds, first.warmup_calls) == (0.1, 3)
    assert (second.warmup_seconds, second.warmup_calls) == (0.0, 3)
    assert first.budget_seconds == second.budget_seconds == pytest.approx(1.0)
