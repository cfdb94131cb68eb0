"""benchmarks/null_report.py: what the null candidates' report reads from the rows (the runs are the
GPU machine's; the arithmetic is checked here)."""

from __future__ import annotations

import math

import pytest
from conftest import load_benchmark


@pytest.fixture(scope="module")
def report_module():
    load_benchmark("call_capture")  # null_report imports it by name, as it does beside it in benchmarks/
    return load_benchmark("null_report")


def score(pair_logs: list[float], within_sd: float) -> dict:
    """A row of several worker pairs: each pair's speedup, and a within interval of ``within_sd``."""
    half = 1.96 * within_sd
    speedups = [math.exp(x) for x in pair_logs]
    return {"pairs": {"pair_speedups": speedups,
                      "pair_intervals_within": [[s * math.exp(-half), s * math.exp(half)] for s in speedups]}}


def test_a_pairs_spread_splits_into_its_own_noise_and_what_lies_between_processes(report_module):
    rows = [score([0.005, -0.005], 0.003), score([0.012, 0.002], 0.003), {"speedup": 1.2, "within": [1.1, 1.3]}]
    pooled, within = report_module.pair_spread(rows)
    assert pooled == pytest.approx(math.sqrt((2 * 0.005 ** 2 + 2 * 0.005 ** 2) / 2))  # one degree of freedom a row
    assert within == pytest.approx(0.003)
    assert all(math.isnan(x) for x in report_module.pair_spread(rows[2:]))  # one pair each: nothing to pool
