"""benchmarks/call_capture.py: each timed call of both sides kept for the right verdict, with whether a
checked call came just before it (what null_candidates.py --per-call measures on the GPU machine)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import pytest
from conftest import load_benchmark

from kbench.judge.trusted.reference import ReferenceSide


@pytest.fixture(scope="module")
def capture_module():
    return load_benchmark("call_capture")


@dataclass
class FakeCall:
    kind: str
    clock_ms: float
    checked: bool = False
    judge_ms: float = 0.0
    steps_ms: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass
class FakeSeries:
    calls: list[FakeCall]

    def timed(self) -> list[FakeCall]:
        return [c for c in self.calls if c.kind == "timed"]


@dataclass
class FakeProblem:
    id: str


class FakeSide:
    def __init__(self, problem_id: str):
        self.problem = FakeProblem(problem_id)


def candidate_round(times: list[float], checked: set[int]) -> FakeSeries:
    """A warm-up call, then timed calls; those at ``checked`` (timed positions) saved for a check."""
    return FakeSeries([FakeCall("warmup", 9.0)] + [
        FakeCall("timed", t, i in checked) for i, t in enumerate(times)])


def replay(side: FakeSide, candidate: FakeSeries, eager_times: list[float], module):
    """A round through the patched replay_round (the real one's effect faked: eager's series filled);
    the capture, and what replay_round was once the capture ended."""
    def filled(self, workers, timed, rounds, series=None, round_index=None):
        series.setdefault("eager", []).append(FakeSeries([FakeCall("warmup", 9.0)] + [
            FakeCall("timed", t) for t in eager_times]))

    original, ReferenceSide.replay_round = ReferenceSide.replay_round, filled
    try:
        with module.CallCapture() as capture:
            assert ReferenceSide.replay_round is not filled
            ReferenceSide.replay_round(side, {}, candidate, {}, {}, 0)
        return capture, ReferenceSide.replay_round is filled
    finally:
        ReferenceSide.replay_round = original


def test_a_call_right_after_a_checked_one_is_marked_and_both_sides_line_up(capture_module):
    side = FakeSide("level1/relu")
    capture = capture_module.CallCapture()
    capture._keep(side, candidate_round([1.0, 1.1, 1.2, 1.3], {0, 2}),
                  FakeSeries([FakeCall("timed", t) for t in (0.9, 1.0, 1.1, 1.2)]))
    [[kept]] = capture.take("level1/relu", [statistics.median([0.9, 1.0, 1.1, 1.2])], 1)  # eager's, as reported
    assert {key: kept[key] for key in ("candidate_ms", "eager_ms", "after_check", "since_check")} == {
        "candidate_ms": [1.0, 1.1, 1.2, 1.3], "eager_ms": [0.9, 1.0, 1.1, 1.2],
        "after_check": [False, True, False, True], "since_check": [None, 1, 2, 1]}
    assert [c["checked"] for c in kept["calls"]] == [False, True, False, True, False]  # the warm-up call first


def test_what_was_kept_goes_to_its_own_problems_verdict_pair_by_pair_or_not_at_all(capture_module):
    capture = capture_module.CallCapture()
    first, second, other = FakeSide("level1/relu"), FakeSide("level1/relu"), FakeSide("level1/gelu")
    for side, times in ((first, [1.0, 1.0]), (other, [5.0, 5.0]), (first, [2.0, 2.0]), (second, [3.0, 3.0])):
        capture._keep(side, candidate_round(times, set()), FakeSeries([FakeCall("timed", t) for t in times]))
    pairs = capture.take("level1/relu", [1.0, 2.0, 3.0], 2)  # two rounds in the first pair, one in the second
    assert [[r["candidate_ms"] for r in rounds] for rounds in pairs] == [[[1.0, 1.0], [2.0, 2.0]], [[3.0, 3.0]]]
    assert capture.take("level1/gelu", [4.0], 1) is None  # not the rounds that verdict measured
    assert capture.take("level1/gelu", [5.0], 1) is None  # and what did not match is gone, not handed on


def test_the_judge_is_itself_again_once_the_capture_ends(capture_module):
    capture, restored = replay(FakeSide("level1/relu"), candidate_round([1.0, 2.0, 3.0], {1}), [1.5, 2.5, 3.5],
                               capture_module)
    assert restored
    [[kept]] = capture.take("level1/relu", [2.5], 1)
    assert kept["eager_ms"] == [1.5, 2.5, 3.5] and kept["after_check"] == [False, False, True]


def test_the_report_finds_a_handicap_that_lives_in_the_calls_after_a_check(capture_module):
    """A candidate 5% slower only right after a checked call: those calls carry all of it, and a
    round's score without them is even."""
    after = [False, True, False, False, True, False, False]
    candidate = [1.05 if a else 1.0 for a in after]
    rounds = [{"candidate_ms": candidate, "eager_ms": [1.0] * len(after), "after_check": after}] * 3
    summary = capture_module._call_summary([{"problem": "level1/relu", "per_call": [rounds]}])
    assert statistics.fmean(summary["groups"]["after a checked call"]) == pytest.approx(-math.log(1.05))
    assert statistics.fmean(summary["groups"]["after an unchecked call"]) == pytest.approx(0.0)
    assert summary["rounds"] == 3 and summary["without"] == pytest.approx(0.0)


def test_the_report_says_how_far_after_a_check_a_slowness_lasts(capture_module):
    """A candidate 5% slower at seven calls after a check (past the settling ones) shows there, and only
    there; distances past ``SINCE_SHOWN`` are pooled with it; a row kept before distances were (an
    older file) adds nothing to them."""
    shown = capture_module.SINCE_SHOWN
    since = [None, 7, 8, shown, shown + 5]
    candidate = [1.05 if s == 7 else 1.0 for s in since]
    rounds = [{"candidate_ms": candidate, "eager_ms": [1.0] * len(since), "after_check": [False] * len(since),
               "since_check": since}]
    older = [{"candidate_ms": [2.0], "eager_ms": [1.0], "after_check": [False]}]
    summary = capture_module._call_summary([{"problem": "level1/relu", "per_call": [rounds, older]}])
    assert sorted(summary["since"]) == [7, 8, shown]
    assert statistics.fmean(summary["since"][7]) == pytest.approx(-math.log(1.05))
    assert summary["since"][shown] == [0.0, 0.0]
