import json
import subprocess
import sys

import pytest
from conftest import PROBLEM, SOLUTIONS

KEYS = {"problem", "device", "status", "correct", "reason", "runtime_ms", "baselines", "speedup"}


def kbench(*args):
    return subprocess.run([sys.executable, "-m", "kbench", *args], capture_output=True, text=True, timeout=300)


def test_eval_json_carries_the_verdict_fields():
    done = kbench("eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--device", "cpu", "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert KEYS <= verdict.keys()
    assert verdict["status"] == "correct" and verdict["correct"] is True
    assert verdict["device"] == "cpu"
    assert verdict["baselines"]["eager"]["runtime_ms"] > 0
    assert verdict["speedup"]["eager"] > 0


def test_a_failing_verdict_still_exits_zero_and_reads_well():
    done = kbench("eval", str(SOLUTIONS / "wrong_shape.py"), "--problem", str(PROBLEM), "--trials", "1", "--policy", "off")
    assert done.returncode == 0, done.stderr
    assert "incorrect" in done.stdout and "expected shape (32, 48)" in done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["eval", "missing.py", "--problem", "level1/relu"], "does not exist"),
        (["eval", str(SOLUTIONS / "honest_triton.py"), "--problem", "level1/nope"], "no problem file or suite id"),
        (["eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--device", "tpu"], "unknown device"),
        (["eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--size", "huge"], "unknown size"),
        (["eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--policy", "lax"], "unknown policy"),
        (["eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--device", "cpu", "--cuda-graph"],
         "CUDA-graph timing needs a CUDA device"),
        (["baseline", "level1/relu", "--device", "cpu", "--cuda-graph"], "CUDA-graph timing needs a CUDA device"),
    ],
)
def test_usage_errors_exit_2_with_a_message(args, message):
    done = kbench(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_problems_list_json():
    done = kbench("problems", "list", "--level", "1", "--json")
    rows = json.loads(done.stdout)
    assert {"id": "level1/relu", "level": 1, "name": "ReLU"}.items() <= next(r for r in rows if r["id"] == "level1/relu").items()
    assert all({"id", "level", "name", "path"} <= r.keys() for r in rows)


def test_strict_policy_rejects_plain_pytorch_before_running_it():
    done = kbench("eval", str(SOLUTIONS / "wrong_shape.py"), "--problem", str(PROBLEM), "--json")
    verdict = json.loads(done.stdout)
    assert (verdict["status"], verdict["correct"]) == ("rejected", False)
    assert verdict["reason"].startswith("no-kernel:")
    assert verdict["policy"] == "strict"


def test_baseline_reports_each_problem_as_it_finishes_and_prints_json():
    done = kbench("baseline", str(PROBLEM), "--device", "cpu", "--baseline", "eager", "--json")
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    (problem_id, columns), = measured.items()
    assert set(columns) == {"eager"} and columns["eager"]["runtime_ms"] > 0
    assert f"[1/1] {problem_id}: eager " in done.stderr and " ms" in done.stderr


def test_a_compiled_column_shows_its_speedup_over_eager():
    from kbench.cli.evaluate import _column_cell

    assert _column_cell("eager", {"runtime_ms": 1.0, "eager_ms": 1.0}) == "1"
    assert _column_cell("compile", {"runtime_ms": 2.0, "eager_ms": 1.0}, " ms") == "2 ms (0.500x)"
