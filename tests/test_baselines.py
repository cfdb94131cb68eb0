"""Baseline columns and their cache: what a cached column is keyed by, and when it is used."""

import dataclasses

import pytest
from conftest import PROBLEM, SOLUTIONS

import kbench
from kbench.judge.trusted.baselines import COLUMNS, BaselineCache, CachedBaseline, Environment, cache_key, check_columns
from kbench.judge.protocol.timing import TimingSettings

ENV = Environment("NVIDIA H200", "580.159.04", {"torch": "2.11.0", "cuda": "13.0", "triton": "3.6.0", "python": "3.12.3"},
                  {"cuda.matmul.allow_tf32": False}, {"rounds": 3})


def test_columns_are_checked_and_eager_always_comes_first():
    assert check_columns(["compile"], "cuda") == ("eager", "compile")
    assert check_columns(list(COLUMNS), "cuda:0") == tuple(COLUMNS)
    with pytest.raises(ValueError, match="unknown baseline"):
        check_columns(["compile-fast"], "cuda")
    with pytest.raises(ValueError, match="needs a CUDA device"):
        check_columns(["cudagraphs"], "cpu")


def test_the_key_changes_with_everything_that_changes_a_baseline():
    base = cache_key("abc", "default", "float32", "compile", ENV)
    changed = [
        cache_key("abd", "default", "float32", "compile", ENV),
        cache_key("abc", "small", "float32", "compile", ENV),
        cache_key("abc", "default", "bfloat16", "compile", ENV),
        cache_key("abc", "default", "float32", "compile-max-autotune", ENV),
        cache_key("abc", "default", "float32", "compile", dataclasses.replace(ENV, device_name="NVIDIA H100")),
        cache_key("abc", "default", "float32", "compile", dataclasses.replace(ENV, driver="570.1")),
        cache_key("abc", "default", "float32", "compile", dataclasses.replace(ENV, versions={**ENV.versions, "torch": "2.12.0"})),
        cache_key("abc", "default", "float32", "compile", dataclasses.replace(ENV, timing={"rounds": 5})),
    ]
    assert base not in changed and len(set(changed)) == len(changed)


def _entry(env: Environment) -> CachedBaseline:
    return CachedBaseline(cache_key("abc", "default", "float32", "compile", env), "abc", "default", "float32",
                          "compile", 2.0, 3.0, {}, dataclasses.asdict(env), "2026-11-29T00:00:00+00:00")


def test_an_entry_from_another_environment_is_named_never_used(tmp_path):
    with BaselineCache(tmp_path / "b.sqlite") as cache:
        cache.put(_entry(ENV))
        hit, not_used = cache.lookup("abc", "default", "float32", "compile", ENV)
        assert hit is not None and hit.runtime_ms == 2.0 and not_used == []
        newer = dataclasses.replace(ENV, versions={**ENV.versions, "torch": "2.12.0"})
        hit, not_used = cache.lookup("abc", "default", "float32", "compile", newer)
        assert hit is None and len(not_used) == 1 and "torch 2.11.0" in not_used[0]
        assert cache.lookup("abc", "default", "float32", "compile-max-autotune", ENV) == (None, [])


@pytest.mark.slow
def test_a_compiled_column_is_measured_once_then_taken_from_the_cache(tmp_path):
    """torch.compile on the CPU (inductor's C++): about a minute on two cores."""
    cache = tmp_path / "baselines.sqlite"
    fast = TimingSettings(budget_seconds=0.5, rounds=2)
    measured = kbench.judge.measure_baselines(PROBLEM, "cpu", ["compile"], timing=fast, cache=cache)
    assert set(measured) == {"eager", "compile"} and measured["compile"]["runtime_ms"] > 0
    verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu", trials=1, timing=fast,
                              baselines=["compile"], baseline_cache=cache, policy="off")
    assert verdict.status == "correct", verdict.reason
    column = verdict.baselines["compile"]
    assert column["source"] == "cache" and column["runtime_ms"] == measured["compile"]["runtime_ms"]
    # eager now over the candidate, times compile over eager as cached
    expected = verdict.speedup["eager"] * measured["compile"]["runtime_ms"] / measured["compile"]["eager_ms"]
    assert verdict.speedup["compile"] == pytest.approx(expected)
    low, high = verdict.speedup_interval["compile"]
    assert low <= verdict.speedup["compile"] <= high


def test_an_unusable_cache_file_is_a_flag_not_a_crash(tmp_path):
    from kbench.judge.trusted.reference import ReferenceSide
    from kbench.suite.problem import load_problem

    broken = tmp_path / "not_a_db.sqlite"
    broken.write_text("this is not SQLite, and longer than a header " * 4)
    side = ReferenceSide(load_problem(PROBLEM), "cpu", "small", "float32", TimingSettings(), 1, ("eager", "compile"), broken)
    assert side.cached_columns() == {}
    assert side.cache is None and "not read" in side.flags[0]
