import json
import subprocess
import sys

import pytest
from conftest import PROBLEM, SOLUTIONS

from kbench.judge.protocol.timing import TimingSettings

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
    assert "not meaningful on a CPU" in verdict["cpu_note"]  # issue 59: a CPU's speedup says so in JSON too


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


def test_strict_policy_reports_a_wrong_plain_pytorch_answer_as_incorrect():
    """The basic error first: the style rule that would reject plain PyTorch is a flag on it."""
    done = kbench("eval", str(SOLUTIONS / "wrong_shape.py"), "--problem", str(PROBLEM), "--policy", "strict", "--json")
    verdict = json.loads(done.stdout)
    assert (verdict["status"], verdict["policy"]) == ("incorrect", "strict")
    assert "expected shape (32, 48)" in verdict["reason"]
    assert any(flag.startswith("no-kernel: ") for flag in verdict["flags"]), verdict["flags"]


def test_eval_off_a_terminal_shows_progress_on_request_says_cpu_and_does_not_wrap():
    done = kbench("eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--device", "cpu",
                  "--trials", "2", "--progress")
    assert done.returncode == 0, done.stderr
    steps = [line.split("] ", 1)[1] for line in done.stderr.splitlines() if line.startswith("[")]
    assert steps[:5] == ["linear_tanh: loading the problem, building and loading the solution",
                         "linear_tanh: trial 1 of 2", "linear_tanh: checking trial 1 of 2",
                         "linear_tanh: trial 2 of 2", "linear_tanh: checking trial 2 of 2"], done.stderr
    assert f"linear_tanh: timing the solution, round 1 of {TimingSettings.rounds}" in steps
    assert any(step.startswith("linear_tanh: timing the baselines (eager)") for step in steps)
    note = next(line for line in done.stdout.splitlines() if "note:" in line)
    assert note.endswith("say nothing about a GPU kernel's speed")  # on one line, though longer than 80 columns
    assert "Triton's interpreter" in note and len(note) > 80
    assert "tolerance float32 atol 0.0001 rtol 0.0001" in done.stdout
    assert "median +-" in done.stdout and "%" in done.stdout and "e+0" not in done.stdout


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


def test_version_short_help_and_problems_commands():
    from typer.testing import CliRunner

    from kbench import __version__
    from kbench.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).output.startswith(f"kbench {__version__}")
    assert "eval [OPTIONS]" in runner.invoke(app, ["eval", "-h"]).output
    empty = runner.invoke(app, ["problems", "list", "--level", "5"])
    assert empty.exit_code == 0 and "no bundled problem of level 5; the suite has levels 1, 2, 3, 4" in empty.output
    shown = runner.invoke(app, ["problems", "show", "level1/relu"])
    assert shown.exit_code == 0, shown.output
    for line in ["size default: batch_size=16384, dim=32768", "size small: batch_size=16, dim=4096",
                 "tolerance float32: atol 0.0001, rtol 0.0001", "class Model(nn.Module):"]:
        assert line in shown.output
    described = json.loads(runner.invoke(app, ["problems", "show", str(PROBLEM), "--json"]).output)
    assert described["tolerance"] == {"float32": {"atol": 1e-4, "rtol": 1e-4}}
    assert "def get_inputs" in described["source"]
    missing = runner.invoke(app, ["problems", "show", "level1/nope"])
    assert missing.exit_code == 2 and "no problem file or suite id 'level1/nope'" in missing.output


def test_verdict_text_reads_without_scientific_spreads_or_empty_parts():
    import io

    from rich.console import Console
    from run_fixtures import make_verdict

    from kbench.cli.verdicts import print_verdict, spread_text

    assert spread_text(0.016) == ", median +-1.60%" and spread_text(0.35) == ", median +-35%"
    assert "unstable" in spread_text(15.0) and spread_text(None) == ""
    out = io.StringIO()
    print_verdict(Console(file=out, width=200), make_verdict("level1/relu", "rejected"))
    text = out.getvalue()
    assert "(size small, float32)" in text and "device unknown" not in text
    assert "wall 0.00s (nothing of the solution ran)" in text and "()" not in text


def test_a_problem_that_fails_at_import_shows_its_own_frames_not_kbenchs(tmp_path):
    problem = tmp_path / "broken_problem.py"
    problem.write_text(PROBLEM.read_text().replace("\nclass Model", "\nraise RuntimeError('broken at import')\n\n"
                                                   "class Model", 1))
    done = kbench("eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(problem), "--device", "cpu")
    assert done.returncode == 2
    assert "the reference failed while loading the problem: RuntimeError: broken at import" in done.stderr
    assert f'File "{problem}", line' in done.stderr and "frame(s) of kbench, torch or other libraries hidden" in done.stderr
    assert "kbench/" not in done.stderr.replace(str(problem), "")  # no frame of kbench's worker


def test_a_kernelbench_precision_casts_a_problem_that_has_no_variant_in_that_dtype():
    common = ["eval", str(SOLUTIONS / "honest_triton.py"), "--problem", str(PROBLEM), "--device", "cpu", "--trials", "2"]
    done = kbench(*common, "--precision", "bf16", "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert (verdict["status"], verdict["dtype"]) == ("correct", "bfloat16")
    assert verdict["tolerance"] == {"bfloat16": {"atol": 0.01, "rtol": 0.01}}  # KernelBench's for fp16 and bf16
    own = kbench(*common, "--dtype", "bfloat16")  # the problem's own variant: it has none
    assert own.returncode == 2 and "no bfloat16 variant" in own.stderr
    both = kbench(*common, "--dtype", "float32", "--precision", "fp16")
    assert both.returncode == 2 and "give one" in both.stderr
