"""``kbench runs`` and ``kbench show`` over a store of hand-made runs (nothing is judged)."""

import json

import pytest
from typer.testing import CliRunner
from view_fixtures import BASE, GELU_REASON, GELU_TAIL, base_run, make_store

from kbench.cli import app
from kbench.runs import views


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return str(make_store(tmp_path_factory.mktemp("views") / "kbench.db"))


def kbench(*args):
    done = CliRunner().invoke(app, [str(a) for a in args])
    return done


def test_runs_lists_every_run_with_its_device_size_origin_and_counts(store):
    done = kbench("runs", "--store", store)
    assert done.exit_code == 0, done.output
    header, *lines = done.stdout.splitlines()
    assert header.split()[:6] == ["run", "created", "device", "size", "dtype", "solutions"]
    assert [line.split()[0] for line in lines] == ["base", "next", "gen"]
    base = lines[0].split()
    # 6 problems, 6 samples of which 5 evaluated (one pending), 3 correct
    assert base[1:3] == ["2026-11-29", "12:00"] and "cpu (Test CPU)" in lines[0]
    assert base[-4:] == ["6", "6", "5/6", "3"]
    assert "small" in base and "float32" in base and "/solutions" in base
    assert "openai/test-model (openai)" in lines[2]


def test_runs_json_and_the_db_option(store):
    done = kbench("runs", "--db", store, "--json")
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert [(r["name"], r["problems"], r["evaluated"], r["correct"]) for r in rows] == [
        ("base", 6, 5, 3), ("next", 6, 6, 4), ("gen", 1, 1, 1)]
    assert rows[0]["device_name"] == "Test CPU" and rows[2]["source"] == "openai"


def test_show_gives_one_line_per_problem_and_sample_with_status_speedup_and_reason(store):
    done = kbench("show", "base", "--store", store)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("run base: 6 problems, 5 of 6 samples evaluated, 3 correct")
    assert lines[1].split() == ["problem", "sample", "status", "eager", "reason"]
    rows = [line.split(maxsplit=4) for line in lines[2:]]
    assert [row[0] for row in rows] == [
        "level1/relu", "level1/gelu", "level1/softmax", "level1/softmax", "level1/matmul", "level2/conv_bias",
        "level2/gemm_relu"]
    assert rows[0] == ["level1/relu", "#0", "correct", "1.5x", "made by hand: correct"]
    assert rows[1] == ["level1/gelu", "#0", "incorrect", "-", GELU_REASON.splitlines()[0]]  # one line of it
    assert rows[3][:3] == ["level1/softmax", "#1", "compile_error"]
    assert rows[4] == ["level1/matmul", "-", "missing", "-", "no solution"]
    assert rows[6] == ["level2/gemm_relu", "#0", "pending", "-", "not evaluated yet"]


def test_show_json_rows(store):
    rows = json.loads(kbench("show", "next", "--store", store, "--json").stdout)
    assert {(r["problem_id"], r["sample_index"]): r["status"] for r in rows}[("level1/relu", 0)] == "runtime_error"
    assert rows[1]["speedup"] == {"eager": 1.1}


def test_show_problem_gives_the_whole_verdict_and_the_output_tail(store):
    done = kbench("show", "base", "gelu", "--store", store)  # a unique name stands for the id
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "level1/gelu" in out and "sample #0: 0.py" in out and ": incorrect" in out
    assert GELU_REASON.splitlines()[1].strip() in out  # the reason whole, not its first line only
    assert "max abs error 0.5, max rel error 0.25" in out
    assert "trial 0: failed (values): max abs error 0.5" in out
    assert f"output tail ({len(GELU_TAIL)} bytes)" in out
    assert all(line in out for line in GELU_TAIL.splitlines())


def test_show_problem_without_a_solution_and_with_several_samples(store):
    missing = kbench("show", "base", "level1/matmul", "--store", store)
    assert missing.exit_code == 0 and "no solution: missing" in missing.stdout
    several = kbench("show", "base", "level1/softmax", "--store", store, "--full")
    assert "sample #0" in several.stdout and "sample #1" in several.stdout
    assert "0.8x eager" in several.stdout and "made by hand: compile_error" in several.stdout
    assert "solution:" in several.stdout  # --full: the source too


def test_show_problem_of_a_generated_run_gives_every_turn(store):
    done = kbench("show", "gen", "relu", "--store", store)
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "the outcome of turn 2" in out
    assert "turn 1 (session 1, 2026-11-30T10:00:00+00:00): incorrect" in out
    assert "reason: incorrect: shape (2,) != (3,)" in out
    assert "turn 2 (session 1, 2026-11-30T10:01:00+00:00): correct (1.7x eager)" in out
    assert "prompt one-shot" in out and "prompt refine" in out and "100 in, 50 out tokens, $0.0010" in out
    assert "This is turn 2: fix it" not in out  # prompts and replies only with --full
    full = kbench("show", "gen", "relu", "--store", store, "--full").stdout
    assert "This is turn 2: fix it" in full and "good" in full


@pytest.mark.parametrize("args, message", [
    (["show", "base", "nope"], "has no problem 'nope'"),
    (["show", "absent"], "no run named 'absent'"),
    (["runs", "--store", "/nonexistent/k.db"], "no kbench store"),
])
def test_usage_errors_exit_2_with_a_message(store, args, message):
    done = kbench(*args, *(["--store", store] if "--store" not in args else []))
    assert done.exit_code == 2
    assert message in " ".join(done.stderr.split()) and done.stdout == ""


def test_a_name_shared_by_several_problems_is_refused_with_them():
    data = base_run(spec=[("level1/relu", 1, None), ("level2/relu", 2, None)])
    with pytest.raises(ValueError, match="matches several problems.*level1/relu, level2/relu"):
        views.find_problem(data, "relu")
    assert views.find_problem(data, "level2/relu").problem.level == 2


def test_rows_and_summary_agree_with_the_spec():
    data = base_run()
    rows = views.sample_rows(data)
    assert len(rows) == sum(len(samples or [None]) for _, _, samples in BASE)
    summary = views.summarize(data)
    assert (summary.problems, summary.with_solution, summary.samples, summary.evaluated, summary.correct) == (
        6, 5, 6, 5, 3)
    assert not summary.complete


def test_one_line_reasons_stay_short():
    assert views.one_line("\n\n  first\nsecond") == "first"
    long = views.one_line("x" * 500)
    assert len(long) == views.REASON_CHARS and long.endswith("...")
