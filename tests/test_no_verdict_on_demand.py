"""The judge never raises and never gives "no verdict" on demand (issue 57, item 5).

Readings of 0, NaN and infinity wherever a time becomes a ratio; text no encoder takes (a lone
surrogate in a candidate's exception message or output); numbers past SQLite's 64 bits from a
command agent's usage.json: each ends in a verdict or a recorded error, and a run always finishes.
(Two evaluations that raise different suspicions: tests/test_confirmation.py.)
"""

from __future__ import annotations

import json
import math
import sys
import textwrap

import pytest
from typer.testing import CliRunner

import kbench
from kbench.agents import command_agent
from kbench.cli import app
from kbench.core.verdict import Trial, Verdict, encodable
from kbench.judge.protocol import pairs, repeatability
from kbench.judge.processes.process import WorkerLost
from kbench.judge.trusted.reference import ReferenceSide
from kbench.judge.protocol.timing import TimingSettings, summarize
from kbench.runs.records import EvaluationRecord, TurnRecord
from kbench.runs.score import SampleOutcome
from kbench.runs.store import Store
from kbench.suite import find_problem

UNREADABLE = [0.0, math.nan, math.inf, -1.0]


# --- readings no clock gives -------------------------------------------------------------------


@pytest.mark.parametrize("bad", UNREADABLE)
def test_an_interval_over_rounds_holding_a_reading_no_clock_gives_is_an_interval(bad):
    honest = [[1.0, 1.1, 0.9], [1.0, 1.05, 0.95]]
    low, high = repeatability.speedup_interval([[2.0, 2.1, bad], [2.0, 2.0, 2.1]], [[bad] * 3, *honest[1:]])
    assert 0 <= low <= high
    assert repeatability.speedup_interval([[bad] * 3], [[bad] * 3]) == (0.0, math.inf)  # nothing usable: says nothing
    assert repeatability.rounds_interval([[bad], [1.0]], [[1.0], [1.0]]) == (math.inf, -math.inf)
    assert repeatability.round_spread([bad, 1.0], [1.0, 1.0]) is None
    assert repeatability.widen(bad, [0.5, 2.0], "cpu") == [0.0, math.inf]
    low, high = repeatability.widen(1.0, [bad, bad], "cuda")
    assert low == 0.0 and high == math.inf


def test_a_bound_hundreds_of_orders_of_magnitude_away_is_infinite_not_an_overflow():
    assert repeatability.widen(1.0, [1e-300, 1e300], "cuda")[1] == pytest.approx(1e300, rel=0.01)
    assert repeatability.widen(1e-300, [1e-310, 1e300], "cuda")[1] == math.inf
    speedup, interval, within = pairs.combined_speedup([1e-300, 1e300], [[1e-308, 1e-300], [1e300, 1e308]], 0.01)
    assert math.isfinite(speedup) and interval[1] == math.inf


def _verdict(speedup, runtime=1.0, within=None):
    timing = {"median_ms": runtime, "mean_ms": runtime, "p25_ms": runtime, "p75_ms": runtime, "min_ms": runtime,
              "max_ms": runtime, "stdev_ms": 1e200, "count": 3, "rel_error": 0.01, "rounds": [runtime]}
    return Verdict("p", "p.py", "0", None, "0", "cpu", "small", "correct", True, "ok", runtime_ms=runtime,
                   baselines={"eager": {"runtime_ms": runtime, "source": "measured", "timing": timing}},
                   speedup={"eager": speedup}, speedup_interval_within={"eager": within or [speedup, speedup]},
                   timing=timing)


@pytest.mark.parametrize("bad", UNREADABLE)
def test_pairs_holding_a_speedup_no_reading_gives_combine_without_it(bad):
    combined = pairs.combined([_verdict(2.0), _verdict(bad, runtime=bad)])
    assert combined.status == "correct" and combined.speedup["eager"] is None
    assert combined.speedup_interval == {}  # no column every pair measured: no interval claimed
    assert not pairs.more_pairs([_verdict(bad)], TimingSettings(pairs=1, max_pairs=4))
    both = pairs.combined([_verdict(2.0, within=[bad, bad]), _verdict(2.0)])
    assert both.speedup["eager"] == pytest.approx(2.0) and both.speedup_interval["eager"][1] == math.inf


def _rounds(*medians):
    return [summarize("cpu-perf-counter", [m, m, m], [m, m, m], 1, "stable", {}).to_dict() for m in medians]


@pytest.mark.parametrize("bad", UNREADABLE[:3])
def test_a_candidate_time_no_call_takes_is_a_verdict_not_a_division(bad):
    side = ReferenceSide(find_problem("level1/relu"), "cpu", "small", "float32", TimingSettings(), 0)
    candidate = _rounds(bad)
    with pytest.raises(WorkerLost) as lost:  # the evaluation's verdict: crashed, the reading named
        side.speedups(summarize("cpu-perf-counter", [bad] * 3, [1.0] * 3, 0, "x", {}), candidate,
                      {"eager": _rounds(1.0)}, {}, False)
    assert lost.value.kind == "protocol" and "which no call takes" in lost.value.detail


@pytest.mark.parametrize("bad", UNREADABLE[:3])
def test_a_baseline_time_no_call_takes_is_no_speedup_and_says_so(bad):
    side = ReferenceSide(find_problem("level1/relu"), "cpu", "small", "float32", TimingSettings(), 0)
    baselines, speedup, intervals = side.speedups(summarize("cpu-perf-counter", [1.0] * 3, [1.0] * 3, 0, "x", {}),
                                                  _rounds(1.0), {"eager": _rounds(bad)}, {}, False)
    assert speedup == {"eager": None} and intervals == {}
    assert any(flag.startswith("no speedup over eager") for flag in side.flags)


@pytest.mark.parametrize("bad", [math.inf, math.nan, 0.0, -2.0, "2.0"])
def test_a_stored_speedup_that_is_no_number_is_never_fast(bad):
    outcome = SampleOutcome.of("correct", {"eager": bad}, {"speedup_interval": {"eager": [bad, bad]}})
    assert not outcome.fast("eager", 0.0) and not outcome.surely_fast("eager", 0.0)
    assert outcome.speedup == {"eager": None}


# --- text no encoder takes -----------------------------------------------------------------------

SURROGATE = "\udc80"


def test_a_lone_surrogate_anywhere_in_a_verdict_is_written_as_its_escape():
    verdict = Verdict("p", "p.py", "0", None, "0", "cpu", "small", "runtime_error", False, f"bad {SURROGATE}",
                      output_tail=f"tail {SURROGATE}", flags=[f"flag {SURROGATE}"],
                      trials=[Trial(0, False, "values", f"detail {SURROGATE}")], seeds={f"k{SURROGATE}": 1})
    assert verdict.reason == "bad \\udc80" and verdict.output_tail == "tail \\udc80"
    assert verdict.flags == ["flag \\udc80"] and verdict.trials[0].detail == "detail \\udc80"
    assert list(verdict.seeds) == ["k\\udc80"]
    json.dumps(verdict.to_dict(), ensure_ascii=False).encode("utf-8")
    plain = {"a": ["b", ("c",)]}
    assert encodable(plain) is plain  # nothing to change: nothing copied


SURROGATE_SOLUTION = textwrap.dedent('''
    import sys
    import torch.nn as nn


    class ModelNew(nn.Module):
        def forward(self, x):
            print(b"raw \\xff bytes".decode("utf-8", "surrogateescape"), file=sys.stderr)
            raise RuntimeError("bad byte \\udc80 in the message")
''')


@pytest.fixture
def surrogate_solution(tmp_path):
    path = tmp_path / "relu.py"
    path.write_text(SURROGATE_SOLUTION)
    return path


def test_a_candidate_whose_exception_holds_a_lone_surrogate_gets_its_verdict_stored_and_printed(
        surrogate_solution, tmp_path):
    verdict = kbench.evaluate("level1/relu", surrogate_solution, "cpu", measure_time=False, trials=1)
    assert verdict.status == "runtime_error" and "bad byte \\udc80 in the message" in verdict.reason
    verdict.reason.encode("utf-8")
    record = EvaluationRecord.from_verdict(verdict, "level1/relu", 0)
    turn = TurnRecord("level1/relu", 0, 0, 1, f"prompt {SURROGATE}", {}, f"reply {SURROGATE}", None, None, None, {},
                      status="runtime_error", reason=f"x {SURROGATE}")
    assert turn.reply == "reply \\udc80"
    with Store(tmp_path / "k.db") as store:  # the rows bound as SQLite takes them
        store.db.execute("CREATE TABLE t (a TEXT)")
        from kbench.runs.store import _row
        store.db.execute("INSERT INTO t VALUES (?)", _row(f"x {SURROGATE}"))
    assert record.reason == verdict.reason


def test_kbench_eval_and_run_finish_on_a_lone_surrogate(surrogate_solution, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KBENCH_DB", str(tmp_path / "k.db"))
    cli = CliRunner()
    shown = cli.invoke(app, ["eval", str(surrogate_solution), "--problem", "level1/relu", "--device", "cpu",
                             "--no-timing", "--trials", "1"], catch_exceptions=False)
    assert shown.exit_code == 0 and "bad byte \\udc80" in shown.output, shown.output
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "relu.py").write_text(SURROGATE_SOLUTION)
    done = cli.invoke(app, ["run", "--run", "r", "-s", str(solutions), "-p", "level1/relu", "--device", "cpu",
                            "--trials", "1"], catch_exceptions=False)
    assert done.exit_code in (0, 1), done.output  # finished: stored, not a usage error (2)
    with Store(tmp_path / "k.db") as store:
        (stored,) = store.evaluations("r")
    assert stored.status == "runtime_error" and "\\udc80" in stored.reason


# --- numbers past what the store holds -----------------------------------------------------------


@pytest.mark.parametrize("usage, kept, errors", [
    ({"input_tokens": 2**64, "output_tokens": 5, "cost_usd": 10**400}, {"output_tokens": 5}, 2),
    ({"input_tokens": -1, "output_tokens": 1.5, "cost_usd": math.inf}, {}, 3),
    ({"input_tokens": 2**63 - 1, "cost_usd": 0.25}, {"input_tokens": 2**63 - 1, "cost_usd": 0.25}, 0),
])
def test_usage_json_out_of_range_is_ignored_with_a_recorded_error(tmp_path, usage, kept, errors):
    (tmp_path / "usage.json").write_text(json.dumps(usage))
    read, problems = command_agent._read_usage(tmp_path)
    assert read == kept and len(problems) == errors
    assert all(len(p) < 200 for p in problems)


def test_usage_json_absent_or_unreadable_gives_no_account(tmp_path):
    assert command_agent._read_usage(tmp_path) == ({}, [])
    (tmp_path / "usage.json").write_text("1" * 5000)  # past the parser's digit limit
    assert command_agent._read_usage(tmp_path)[0] == {}
    (tmp_path / "usage.json").write_text("[" * 100_000)
    assert command_agent._read_usage(tmp_path)[0] == {}


def test_a_command_agents_huge_token_count_reaches_the_store_as_an_error_not_a_crash(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent('''
        import json, pathlib, sys
        if "--version" in sys.argv:
            sys.exit(0)
        pathlib.Path("solution.py").write_text("class ModelNew: pass\\n")
        pathlib.Path("usage.json").write_text(json.dumps({"input_tokens": 2**70, "output_tokens": 3}))
    '''))
    judge = command_agent.JudgeSettings(device="cpu", size="small", trials=1, timeout=60.0, policy="lenient")
    provider = command_agent.CommandProvider(f"{sys.executable} {agent}", judge=judge, time_limit=30)
    reply = provider.generate(command_agent.Request("go", "level1/p1", "# problem\n", 0, 1))
    assert reply.input_tokens is None and reply.output_tokens == 3
    assert "input_tokens ignored" in reply.details["usage_errors"][0]
    turn = TurnRecord("p", 0, 0, 1, "prompt", {}, "reply", None, None, None, {}, input_tokens=2**70)
    with Store(tmp_path / "k.db") as store:  # a record built elsewhere with such a count: stored without it
        from kbench.runs.store import _row
        assert _row(turn.input_tokens, 2**63 - 1, True) == (None, 2**63 - 1, True)
