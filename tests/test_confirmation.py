"""A rejection that noise could have made is a suspicion, measured again before it is a verdict."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

import kbench
from kbench.core.verdict import Verdict
from kbench.judge import evaluation
from kbench.judge.confirmation import Unconfirmed, confirmed
from kbench.judge.builds.cache import building_fresh
from kbench.judge.guard import Finding
from kbench.judge.protocol.timing import TimingSettings


def verdict(status: str, reason: str, wall: float = 1.0) -> Verdict:
    return Verdict(problem="p", problem_path="p.py", problem_sha256="0", solution_path=None, solution_sha256="1",
                   device="cpu", size="small", status=status, correct=status == "correct", reason=reason,
                   wall_seconds=wall)


class Judged:
    """Stands for one evaluation after another: the verdicts given, and the spares each was given."""

    def __init__(self, *verdicts: Verdict):
        self.verdicts, self.spares = list(verdicts), []

    def __call__(self, spares):
        self.spares.append(spares)
        return self.verdicts.pop(0)


CLOCK = "trusted-clock: in every one of 3 round(s) the judge's clock saw more ..."


def test_a_verdict_that_is_no_suspicion_is_given_at_once():
    for first in (verdict("correct", "5 of 5 trials"), verdict("incorrect", "trial 0: values"),
                  verdict("rejected", "input-mutated: ...")):
        judged = Judged(first)
        assert confirmed(judged, "spares") is first
        assert judged.spares == ["spares"]


def test_a_suspicion_not_seen_again_gives_the_second_verdict_and_keeps_the_first():
    judged = Judged(verdict("rejected", CLOCK, wall=2.0), verdict("correct", "5 of 5 trials", wall=3.0))
    final = confirmed(judged, None)
    assert final.status == "correct" and final.reason == "5 of 5 trials"
    assert final.suspicions == [CLOCK]
    assert final.wall_seconds == 5.0
    assert judged.spares == [None, None]  # measured again with fresh workers, not spares


def test_a_suspicion_seen_again_is_rejected_with_both_observations():
    judged = Judged(verdict("rejected", CLOCK), verdict("rejected", CLOCK.replace("...", "again")))
    final = confirmed(judged, None)
    assert final.status == "rejected" and final.reason.startswith("trusted-clock: ")
    assert "seen again in a second evaluation" in final.reason
    assert len(final.suspicions) == 1


INTERFERENCE = "reference-interference: the reference failed beside the candidate"
BUSY = "gpu-busy: the GPU was busy before a baseline"


class FreshJudged(Judged):
    """Judged, noting whether each evaluation built in a fresh build cache of its own."""

    def __call__(self, spares):
        self.fresh = [*getattr(self, "fresh", []), building_fresh()]
        return super().__call__(spares)


@pytest.mark.parametrize("third, rule, named", [(CLOCK, "trusted-clock: ", INTERFERENCE),
                                                (INTERFERENCE, "reference-interference: ", CLOCK)])
def test_two_different_suspicions_are_decided_by_a_third_evaluation(third, rule, named):
    """Issue 57: two evaluations raising different suspicions were "no verdict" for ever (a run
    retried them as infra_error): a third evaluation, in fresh workers and a fresh build cache,
    decides; the rule it raises again is the verdict, naming both."""
    judged = FreshJudged(verdict("rejected", CLOCK, 1.0), verdict("rejected", INTERFERENCE, 2.0),
                         verdict("rejected", third, 4.0))
    final = confirmed(judged, "spares")
    assert final.status == "rejected" and final.reason.startswith(rule)
    assert "seen in two of three evaluations" in final.reason and named in final.reason
    assert final.suspicions == [CLOCK, INTERFERENCE] and final.wall_seconds == 7.0
    assert judged.spares == ["spares", None, None] and judged.fresh == [False, True, True]


def test_a_candidate_that_still_alternates_is_rejected_naming_every_suspicion():
    judged = Judged(verdict("rejected", CLOCK), verdict("rejected", INTERFERENCE), verdict("rejected", BUSY))
    final = confirmed(judged, None)
    assert final.status == "rejected" and final.reason.startswith("gpu-busy: ")
    assert "three different suspicions" in final.reason and CLOCK in final.reason and INTERFERENCE in final.reason


def test_a_third_evaluation_with_a_verdict_of_its_own_gives_it():
    judged = Judged(verdict("rejected", CLOCK), verdict("rejected", INTERFERENCE), verdict("correct", "5 of 5"))
    final = confirmed(judged, None)
    assert final.status == "correct" and final.reason == "5 of 5"
    assert final.suspicions == [CLOCK, INTERFERENCE]


# The noisy rules that still reject (trusted-clock and timer-mismatch only flag since the judge's clock
# bounds every call's time: kbench.judge.guard.ALWAYS_FLAG).
ALTERNATING = {1: "gpu-busy", 2: "reference-interference", 3: "gpu-busy"}


def test_the_whole_path_reaches_a_verdict_on_suspicions_that_alternate(monkeypatch):
    """End to end, with the suspicions forced as an alternating candidate would raise them: a
    verdict, rejected for the rule seen twice, each evaluation after the first in a fresh build cache."""
    real = evaluation.trusted_times
    calls = []

    def alternating(*args, **kwargs):
        accepted, excess, _ = real(*args, **kwargs)
        calls.append(building_fresh())
        return accepted, excess, [Finding(ALTERNATING[len(calls)], f"observation {len(calls)}")]

    monkeypatch.setattr(evaluation, "trusted_times", alternating)
    timing = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=0.5)
    final = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cpu", size="small", trials=1, timing=timing)
    assert final.status == "rejected" and final.reason.startswith("gpu-busy: observation 3")
    assert "two of three" in final.reason and "reference-interference: observation 2" in final.reason
    assert calls == [False, True, True]


def test_an_honest_kernel_with_a_suspicion_that_does_not_repeat_is_correct(monkeypatch):
    """The whole path, end to end: the judge's clock 'sees' an anomaly in the first
    evaluation only (as a burst of load would make); the solution is evaluated again
    with fresh workers and is correct, the first observation kept."""
    real = evaluation.trusted_times
    calls = []

    def noisy_once(*args, **kwargs):
        # The mechanism is under test here, not the clock (the honest corpus tests that under
        # load): the first evaluation sees a burst, the second what a quiet machine shows.
        accepted, excess, _ = real(*args, **kwargs)
        calls.append(1)
        return accepted, excess, [Finding("gpu-busy", "a burst of load")] if len(calls) == 1 else []

    monkeypatch.setattr(evaluation, "trusted_times", noisy_once)
    timing = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=0.5)
    final = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cpu", size="small", trials=1, timing=timing)
    assert final.status == "correct", final.reason
    assert final.suspicions == ["gpu-busy: a burst of load"]
    assert len(calls) == 2


def test_eval_says_there_is_no_verdict_and_exits_3(monkeypatch, tmp_path):
    """Not a usage error (2), not a verdict (0): the same command may reach one on a quieter machine."""
    from typer.testing import CliRunner

    from kbench.cli import app
    from kbench.cli import evaluate as evaluate_command

    def unsure(*args, **kwargs):
        raise Unconfirmed("two evaluations raised different suspicions (first trusted-clock: ...; then gpu-busy: ...)")

    monkeypatch.setattr(evaluate_command, "evaluate", unsure)
    done = CliRunner().invoke(app, ["eval", str(EXAMPLES / "relu.py"), "--problem", "level1/relu", "--device", "cpu",
                                    "--no-progress"])
    assert done.exit_code == 3, done.output
    assert "no verdict" in done.output and "different suspicions" in done.output
    assert "Traceback" not in done.output
