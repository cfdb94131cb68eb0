"""The verdict's speedup interval, with a between-process spread: its arithmetic, and its
coverage of the truth over simulated evaluations whose processes differ as on a GPU."""

import math
import random

import pytest

from kbench.judge.repeatability import BETWEEN_PROCESS_SD, Z95, speedup_interval, widen


def test_a_narrow_within_interval_widens_to_the_between_process_spread():
    low, high = widen(2.0, [1.999, 2.001], "cuda:0")
    s = BETWEEN_PROCESS_SD["cuda"]
    assert low == pytest.approx(2.0 * math.exp(-math.hypot(math.log(2.0 / 1.999), Z95 * s)))
    assert high == pytest.approx(2.0 * math.exp(math.hypot(math.log(2.001 / 2.0), Z95 * s)))
    assert low < 2.0 * math.exp(-Z95 * s) * 1.0001 and high > 2.0 * math.exp(Z95 * s)


def test_a_wide_within_interval_is_kept_nearly_as_it_is():
    low, high = widen(1.0, [0.5, 1.5], "cuda")
    assert low == pytest.approx(0.5, rel=0.001) and high == pytest.approx(1.5, rel=0.001)
    assert widen(1.0, [0.9, 1.1], "cpu")[0] < widen(1.0, [0.9, 1.1], "cuda")[0]  # the CPU's spread is wider


def simulated_evaluation(rng: random.Random, truth: float, process_sd: float) -> tuple[float, list[float]]:
    """Three alternating rounds of 40 calls each; each side's process is slower or faster
    than the truth by its own lognormal factor, and each call by lognormal noise."""
    eager_process = math.exp(rng.gauss(0, process_sd / math.sqrt(2)))
    candidate_process = math.exp(rng.gauss(0, process_sd / math.sqrt(2)))
    eager = [[eager_process * math.exp(rng.gauss(0, 0.01)) for _ in range(40)] for _ in range(3)]
    candidate = [[candidate_process / truth * math.exp(rng.gauss(0, 0.01)) for _ in range(40)] for _ in range(3)]
    median = sorted(x for r in eager for x in r)[60] / sorted(x for r in candidate for x in r)[60]
    return median, list(speedup_interval(eager, candidate, reps=200, seed=rng.randrange(10**6)))


def test_the_interval_holds_the_truth_at_its_stated_rate_when_processes_differ():
    rng = random.Random(7)
    truth, process_sd = 1.0, BETWEEN_PROCESS_SD["cuda"]
    evaluations = [simulated_evaluation(rng, truth, process_sd) for _ in range(300)]
    within = sum(low <= truth <= high for _, (low, high) in evaluations) / len(evaluations)
    widened = [widen(speedup, interval, "cuda") for speedup, interval in evaluations]
    covered = sum(low <= truth <= high for low, high in widened) / len(widened)
    assert within < 0.6  # the within-evaluation interval alone: far below 95%
    assert 0.9 <= covered <= 0.99
