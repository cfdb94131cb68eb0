"""kbench run: sources, resumption, and the commands, with a fake judge except where noted."""

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import SOLUTIONS
from rich.console import Console
from run_fixtures import FakeJudge, fake_solution, problem_dir
from typer.testing import CliRunner

from kbench import judge
from kbench.cli import app
from kbench.cli import run as cli_runs
from kbench.judge.protocol.timing import TimingSettings
from kbench.runs import export, runner
from kbench.runs.manifest import Manifest
from kbench.runs.score import columns_of, outcomes, score
from kbench.runs.store import Store

NAMES = ["p1", "p2", "p3", "p4", "p5"]


def manifest_for(config):
    return Manifest(config=config, captured_at="now")


def setup_run(tmp_path, names=NAMES, marks=None):
    """Problems level1/p1..p5; solutions for all but the last, fast by default."""
    problems = problem_dir(tmp_path / "problems", names)
    solutions = tmp_path / "solutions"
    solutions.mkdir(exist_ok=True)
    marks = marks or {name: "correct 2.0" for name in names[:-1]}
    for name, mark in marks.items():
        fake_solution(solutions / f"{name}.py", mark)
    return problems, solutions


def start(store, problems, solutions, evaluate, name="r", listener=None, devices=(), **options):
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    settings = dict(device="cpu", size="small", trials=5, timeout=300.0) | options
    config = runner.run_config(plan, selection=[str(problems)], solutions=solutions, **settings)
    return runner.execute(store, name, config, plan, evaluate=evaluate, listener=listener,
                          manifest=manifest_for(config), devices=devices)


def test_replay_finds_files_folders_of_samples_and_kernelbench_names(tmp_path):
    problems = problem_dir(tmp_path / "problems", ["relu", "gelu", "19_ReLU", "7_Conv"])
    solutions = tmp_path / "solutions"
    fake_solution(solutions / "relu.py", "correct 1.0")
    fake_solution(solutions / "gelu" / "b.py", "correct 1.0")
    fake_solution(solutions / "gelu" / "a.py", "incorrect")
    for sample in (10, 2):
        fake_solution(solutions / f"level_1_problem_19_sample_{sample}_kernel.py", "correct 1.0")
    fake_solution(solutions / "level_2_problem_19_sample_0_kernel.py", "correct 1.0")  # another level
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    found = {(s.problem_id, s.index): s.name for s in plan.samples}
    assert found == {
        ("level1/relu", 0): "relu.py",
        ("level1/gelu", 0): "gelu/a.py",
        ("level1/gelu", 1): "gelu/b.py",
        ("level1/19_ReLU", 0): "level_1_problem_19_sample_2_kernel.py",
        ("level1/19_ReLU", 1): "level_1_problem_19_sample_10_kernel.py",
    }
    assert [p.id for p in plan.problems] == ["level1/7_Conv", "level1/19_ReLU", "level1/gelu", "level1/relu"]
    assert plan.samples_of("level1/7_Conv") == []
    assert plan.unclaimed == ("level_2_problem_19_sample_0_kernel.py",)


def test_kernelbench_export_uses_kernelbench_numbers_for_a_kernelbench_level(tmp_path):
    problems = problem_dir(tmp_path / "problems", ["19_ReLU", "7_Conv"])
    solutions = tmp_path / "solutions"
    for sample, mark in ((0, "correct 1.5"), (1, "incorrect")):
        fake_solution(solutions / f"level_1_problem_19_sample_{sample}_kernel.py", mark)
    with Store(tmp_path / "k.db") as store:
        start(store, problems, solutions, FakeJudge())
        results = export.kernelbench(store.load("r"))
    assert list(results) == ["7", "19"]
    assert [(s["sample_id"], s["correctness"]) for s in results["19"]] == [(0, True), (1, False)]
    assert results["7"][0]["metadata"]["kbench_status"] == "missing"


def test_selection_by_suite_level_and_id():
    level1 = runner.select_problems(["level1"])
    assert len(level1) > 50 and all(p.level == 1 for p in level1)
    both = runner.select_problems(["level1/relu,level1/gelu", "level1/relu"])
    assert [p.id for p in both] == ["level1/relu", "level1/gelu"]
    with pytest.raises(Exception, match="no problem file or suite id"):
        runner.select_problems(["level1/nope"])


def test_missing_solutions_are_recorded_and_everything_else_evaluated(tmp_path):
    problems, solutions = setup_run(tmp_path)
    fake = FakeJudge()
    with Store(tmp_path / "k.db") as store:
        start(store, problems, solutions, fake)
        statuses = {e.problem_id: e.status for e in store.evaluations("r")}
    assert statuses == {"level1/p1": "correct", "level1/p2": "correct", "level1/p3": "correct",
                        "level1/p4": "correct", "level1/p5": "missing"}
    assert len(fake.calls) == 4


def test_an_interrupted_run_resumes_with_only_what_is_left(tmp_path):
    problems, solutions = setup_run(tmp_path)
    with Store(tmp_path / "k.db") as store:
        with pytest.raises(KeyboardInterrupt):
            start(store, problems, solutions, FakeJudge(fail_after=2))
        done = {e.problem_id for e in store.evaluations("r")}
        assert done == {"level1/p1", "level1/p2", "level1/p5"}  # two verdicts, and the missing one
        second = FakeJudge()
        made = start(store, problems, solutions, second)
        assert [call[0] for call in second.calls] == ["level1/p3", "level1/p4"]
        assert [e.problem_id for e in made] == ["level1/p3", "level1/p4"]
        assert [s.number for s in store.sessions("r")] == [1, 2]
        assert {e.problem_id: e.session for e in store.evaluations("r")}["level1/p4"] == 2
        third = FakeJudge()
        assert start(store, problems, solutions, third) == [] and third.calls == []


class DeviceRecordingJudge(FakeJudge):
    """Remembers the device of each evaluation, and waits a little so that the devices overlap."""

    def __init__(self, fail_on: str | None = None):
        super().__init__()
        self.devices: list[str] = []
        self.fail_on = fail_on

    def __call__(self, problem, solution, device, **kwargs):
        self.devices.append(device)
        if problem.id == self.fail_on:
            raise KeyboardInterrupt
        time.sleep(0.05)
        return super().__call__(problem, solution, device, **kwargs)


def test_a_run_on_several_devices_judges_each_sample_once_and_stores_every_verdict(tmp_path):
    problems, solutions = setup_run(tmp_path)
    judged = DeviceRecordingJudge()
    with Store(tmp_path / "k.db") as store:
        made = start(store, problems, solutions, judged, devices=["cpu", "cpu"])
        statuses = {e.problem_id: e.status for e in store.evaluations("r")}
    assert sorted(call[0] for call in judged.calls) == [f"level1/p{i}" for i in range(1, 5)]
    assert statuses == {**{f"level1/p{i}": "correct" for i in range(1, 5)}, "level1/p5": "missing"}
    assert len(made) == 5 and judged.devices == ["cpu"] * 4


def test_an_interrupted_run_on_several_devices_keeps_what_finished(tmp_path):
    problems, solutions = setup_run(tmp_path)
    with Store(tmp_path / "k.db") as store:
        with pytest.raises(KeyboardInterrupt):
            start(store, problems, solutions, DeviceRecordingJudge(fail_on="level1/p3"), devices=["cpu", "cpu"])
        done = {e.problem_id for e in store.evaluations("r")}
        again = FakeJudge()
        start(store, problems, solutions, again, devices=["cpu", "cpu"])
        assert {call[0] for call in again.calls} == {f"level1/p{i}" for i in range(1, 5)} - done
        assert {e.problem_id for e in store.evaluations("r")} == {f"level1/p{i}" for i in range(1, 6)}


def test_gpus_are_named_by_index_or_all(cli, tmp_path):
    problems, solutions = setup_run(tmp_path)
    refused = cli("run", "--run", "g", "-s", str(solutions), "-p", str(problems), "--gpus", "zero")
    assert refused.exit_code == 2 and "GPU indexes" in refused.output
    absent = cli("run", "--run", "g", "-s", str(solutions), "-p", str(problems), "--gpus", "7")
    assert absent.exit_code == 2 and "cuda:7" in absent.output


KILLED_RUN = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from kbench.runs import runner
    from kbench.runs.store import Store
    from run_fixtures import FakeJudge

    class SlowJudge(FakeJudge):
        def __call__(self, *args, **kwargs):
            time.sleep(0.3)
            return super().__call__(*args, **kwargs)

    problems, solutions = Path(sys.argv[1]), Path(sys.argv[2])
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    config = runner.run_config(plan, selection=[str(problems)], solutions=solutions, device="cpu", size="small",
                               trials=5, timeout=300.0)
    with Store(sys.argv[4]) as store:
        runner.execute(store, "r", config, plan, evaluate=SlowJudge())
    """
)


def test_a_killed_run_loses_nothing_and_resumes(tmp_path):
    names = [f"p{i}" for i in range(12)]
    problems, solutions = setup_run(tmp_path, names, {n: "correct 1.5" for n in names})
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN)
    tests_dir = str(Path(__file__).parent)
    process = subprocess.Popen(
        [sys.executable, str(script), str(problems), str(solutions), tests_dir, str(tmp_path / "k.db")]
    )
    deadline = time.monotonic() + 60
    recorded: list = []
    while time.monotonic() < deadline and len(recorded) < 3:
        time.sleep(0.2)
        if (tmp_path / "k.db").exists():
            try:
                with Store(tmp_path / "k.db") as store:
                    recorded = store.evaluations("r")
            except Exception:  # the run may not have created its tables yet
                recorded = []
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 3 <= len(recorded) < len(names), "the run finished before it could be killed"
    with Store(tmp_path / "k.db") as store:
        survived = {e.problem_id for e in store.evaluations("r")}
        resumed = FakeJudge()
        start(store, problems, solutions, resumed)
        final = store.evaluations("r")
    assert survived >= {e.problem_id for e in recorded}
    assert {call[0] for call in resumed.calls} == {f"level1/{n}" for n in names} - survived
    assert len(final) == len(names) and all(e.status == "correct" for e in final)


def test_sigterm_stops_the_command_with_finished_verdicts_kept(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path)

    class TerminatedJudge(FakeJudge):
        def __call__(self, *args, **kwargs):
            if len(self.calls) == 2:
                os.kill(os.getpid(), signal.SIGTERM)  # as a scheduler would, mid-evaluation
            return super().__call__(*args, **kwargs)

    monkeypatch.setattr(cli_runs, "evaluate", TerminatedJudge())
    handler = signal.getsignal(signal.SIGTERM)
    done = cli("run", "--run", "r", "-s", str(solutions), "-p", str(problems), "--device", "cpu")
    assert done.exit_code == 130 and "interrupted: finished verdicts are stored" in done.output
    assert signal.getsignal(signal.SIGTERM) is handler
    with Store(tmp_path / "kbench.db") as store:
        assert {e.problem_id for e in store.evaluations("r")} == {"level1/p1", "level1/p2", "level1/p5"}


def test_resuming_with_other_settings_is_refused(tmp_path):
    problems, solutions = setup_run(tmp_path)
    with Store(tmp_path / "k.db") as store:
        start(store, problems, solutions, FakeJudge())
        with pytest.raises(runner.RunError, match="trials: stored 5, now 2"):
            start(store, problems, solutions, FakeJudge(), trials=2)
        fake_solution(solutions / "p5.py", "correct 3.0")  # the source changed since
        with pytest.raises(runner.RunError, match="solution files differ"):
            start(store, problems, solutions, FakeJudge())


def test_a_cuda_graph_run_times_every_evaluation_by_graph_replays_and_resumes_only_so(tmp_path):
    problems, solutions = setup_run(tmp_path)
    with Store(tmp_path / "k.db") as store:
        judged = FakeJudge()
        start(store, problems, solutions, judged, cuda_graph=True)
        assert judged.timing == TimingSettings(cuda_graph=True)
        assert store.run("r").config.cuda_graph is True
        data = store.load("r")
        shown = Console(file=io.StringIO(), width=200)
        cli_runs.print_score(shown, data, score(outcomes(data), columns_of(data)))
        assert "timed by CUDA-graph replays" in shown.file.getvalue()
        with pytest.raises(runner.RunError, match="cuda_graph: stored True, now False"):
            start(store, problems, solutions, FakeJudge())


def test_a_run_of_worker_pairs_judges_every_sample_so_keeps_it_and_says_it(cli, tmp_path):
    """--pairs and --max-pairs reach every evaluation's timing, stay with the run (a resumed run takes
    them, another value is refused) and are said by the score and the manifest."""
    problems, solutions = setup_run(tmp_path)
    done = cli("run", "--run", "p", "-s", str(solutions), "-p", str(problems), "--device", "cpu", "--pairs", "2",
               "--max-pairs", "6")
    assert done.exit_code == 0, done.output
    assert cli.judge.timing == TimingSettings(pairs=2, max_pairs=6)
    assert "speedups averaged over 2 to 6 worker pairs" in done.output
    with Store(tmp_path / "kbench.db") as store:
        run = store.run("p")
        assert (run.config.pairs, run.config.max_pairs) == (2, 6)
        assert store.load("p").sessions[0].manifest.timing_protocol["max_pairs"] == 6
    assert cli("run", "--run", "p").exit_code == 0  # resumed: the stored pairs, nothing left to judge
    refused = cli("run", "--run", "p", "--pairs", "3")
    assert refused.exit_code == 2 and "pairs" in refused.output
    impossible = cli("run", "--run", "q", "-s", str(solutions), "-p", str(problems), "--device", "cpu", "--pairs", "3",
                     "--max-pairs", "2")
    assert impossible.exit_code == 2 and "max_pairs 2" in impossible.output


def test_a_run_that_decides_at_fast_ps_speedups_keeps_them_and_says_it(cli, tmp_path):
    """--decide-at reaches every evaluation's timing, stays with the run and is said; a word that is no
    speedup, or one without --max-pairs to choose with, is a usage error."""
    problems, solutions = setup_run(tmp_path)
    given = ("-s", str(solutions), "-p", str(problems), "--device", "cpu")
    done = cli("run", "--run", "d", *given, "--max-pairs", "6", "--decide-at", "fast_p")
    assert done.exit_code == 0, done.output
    assert cli.judge.timing == TimingSettings(max_pairs=6, decide_at=(0.5, 0.8, 1.0, 1.5, 2.0))
    assert "1 to 6 worker pairs, more only near 0.5, 0.8, 1, 1.5, 2x" in done.output
    with Store(tmp_path / "kbench.db") as store:
        assert store.run("d").config.decide_at == (0.5, 0.8, 1.0, 1.5, 2.0)
        data = store.load("d")
    took = iter([1, 1, 6, 2])  # the four correct ones; the fifth problem has no solution
    data = dataclasses.replace(data, evaluations=[
        dataclasses.replace(e, verdict={"timing": {"pair_speedups": {"eager": [1.0] * n, "compile": [1.0] * n}}})
        if e.correct and (n := next(took)) else e for e in data.evaluations])
    shown = Console(file=io.StringIO(), width=300)
    cli_runs.print_score(shown, data, score(outcomes(data), columns_of(data)))
    assert "2x (verdicts by pairs taken: 1: 2, 2: 1, 6: 1)" in shown.file.getvalue()
    assert cli("run", "--run", "d").exit_code == 0  # resumed: the stored speedups
    refused = cli("run", "--run", "d", "--decide-at", "1")
    assert refused.exit_code == 2 and "decide_at" in refused.output
    word = cli("run", "--run", "e", *given, "--max-pairs", "6", "--decide-at", "fast")
    assert word.exit_code == 2 and "--decide-at 'fast'" in word.output
    alone = cli("run", "--run", "f", *given, "--decide-at", "1,1.5")
    assert alone.exit_code == 2 and "needs max_pairs" in alone.output


def test_failures_outside_the_candidate_are_recorded_and_retried_on_resume(tmp_path):
    problems, solutions = setup_run(tmp_path, ["p1", "p2"], {"p1": "correct 2.0", "p2": "correct 2.0"})

    def flaky(problem, solution, device, **kwargs):
        if problem.id == "level1/p2":
            raise OSError("worker could not start")
        return FakeJudge()(problem, solution, device, **kwargs)

    with Store(tmp_path / "k.db") as store:
        start(store, problems, solutions, flaky)
        failed = {e.problem_id: e for e in store.evaluations("r")}["level1/p2"]
        assert failed.status == "infra_error" and "worker could not start" in failed.reason
        again = FakeJudge()
        start(store, problems, solutions, again)
        assert [call[0] for call in again.calls] == ["level1/p2"]
        assert {e.status for e in store.evaluations("r")} == {"correct"}


def test_unknown_baseline_columns_are_refused(tmp_path):
    problems, solutions = setup_run(tmp_path)
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    with pytest.raises(runner.RunError, match="unknown baseline compile-fastest"):
        runner.run_config(plan, selection=[str(problems)], solutions=solutions, device="cpu", size="small",
                          trials=5, timeout=300.0, baselines=["eager", "compile-fastest"])


def test_the_progress_bar_reports_every_verdict(tmp_path):
    problems, solutions = setup_run(tmp_path)
    out = io.StringIO()
    with Store(tmp_path / "k.db") as store:
        bar = cli_runs.BarProgress(Console(file=out, force_terminal=True, width=120))
        start(store, problems, solutions, FakeJudge(), listener=bar)
        bar.close()
    text = out.getvalue()
    assert "5/5" in text and "level1/p4 #0: correct (2x eager, not meaningful on a CPU)" in text
    assert "level1/p3 #0 " in text.replace("level1/p3 #0:", "")  # the bar named the problem being judged


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """Runs the kbench app in this process, in tmp_path, with a fake judge."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KBENCH_DB", raising=False)
    fake = FakeJudge()
    monkeypatch.setattr(cli_runs, "evaluate", fake)
    runner_ = CliRunner()

    def invoke(*args):
        return runner_.invoke(app, list(args), catch_exceptions=False)

    invoke.judge = fake
    return invoke


def test_score_json_keys_and_values(cli, tmp_path):
    problems, solutions = setup_run(tmp_path, marks={"p1": "correct 2.0", "p2": "correct 0.9", "p3": "incorrect",
                                                     "p4": "correct 1.2"})
    done = cli("run", "--run", "r", "--solutions", str(solutions), "--problems", str(problems), "--device", "cpu")
    assert done.exit_code == 0, done.output
    assert "4 to evaluate; 1 recorded already (missing 1)" in done.output
    result = cli("score", "r", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert {"n_problems", "correct_rate", "fast_p", "coverage", "failures", "levels", "manifest"} <= document.keys()
    assert document["n_problems"] == 5
    assert document["correct_rate"] == pytest.approx(3 / 5)
    assert set(document["fast_p"]) == {"eager"}
    assert document["fast_p"]["eager"] == pytest.approx({"0": 0.6, "0.5": 0.6, "0.8": 0.6, "1": 0.4, "1.5": 0.2, "2": 0.0})
    assert document["failures"] == {"incorrect": 1, "missing": 1}
    assert document["manifest"]["config"]["device"] == "cpu"
    assert document["manifest"]["torch"] and "git_dirty" in document["manifest"]
    assert document["complete"] is True


def test_run_resumes_from_the_stored_settings_and_db_comes_from_the_environment(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path)
    monkeypatch.setenv("KBENCH_DB", str(tmp_path / "elsewhere.db"))
    assert cli("run", "--run", "r", "-s", str(solutions), "-p", str(problems), "--device", "cpu").exit_code == 0
    assert (tmp_path / "elsewhere.db").exists() and not (tmp_path / "kbench.db").exists()
    calls = len(cli.judge.calls)
    again = cli("run", "--run", "r")
    assert again.exit_code == 0 and len(cli.judge.calls) == calls
    assert "0 to evaluate; 5 recorded already" in again.output
    mismatch = cli("run", "--run", "r", "--trials", "1")
    assert mismatch.exit_code == 2


def test_usage_errors_exit_2(cli, tmp_path):
    problems, solutions = setup_run(tmp_path)
    assert cli("run", "--run", "new", "--problems", str(problems)).exit_code == 2
    assert cli("run", "--run", "bad/name", "-s", str(solutions), "-p", str(problems)).exit_code == 2
    assert cli("run", "--run", "r", "-s", str(tmp_path / "nowhere"), "-p", str(problems)).exit_code == 2
    assert cli("score", "absent").exit_code == 2
    graph_on_cpu = cli("run", "--run", "g", "-s", str(solutions), "-p", str(problems), "--device", "cpu", "--cuda-graph")
    assert graph_on_cpu.exit_code == 2 and "CUDA-graph timing needs a CUDA device" in graph_on_cpu.output
    assert not (tmp_path / "kbench.db").exists()


def test_compare_and_exports(cli, tmp_path):
    problems, solutions = setup_run(tmp_path)
    assert cli("run", "--run", "a", "-s", str(solutions), "-p", str(problems), "--device", "cpu").exit_code == 0
    better = tmp_path / "better"
    for name in NAMES:
        fake_solution(better / f"{name}.py", "correct 3.0")
    assert cli("run", "--run", "b", "-s", str(better), "-p", str(problems), "--device", "cpu").exit_code == 0
    compared = json.loads(cli("compare", "a", "b", "--json").output)
    assert compared["n_problems"] == 5
    assert compared["correct_rate"]["difference"] == pytest.approx(0.2)  # p5 was missing in a
    assert compared["fast_p"]["eager"]["2"]["difference"] == pytest.approx(1.0)
    table = cli("compare", "a", "b").output
    assert "over eager: paired difference B - A" in table
    assert "problems whose status flipped" in table and "level1/p5" in table  # missing in a, correct in b
    assert json.loads(cli("compare", "a", "b", "--json").output)["flipped"][0]["status"] == {"a": "missing",
                                                                                         "b": "correct"}

    assert cli("run", "--run", "c", "-s", str(better), "-p", str(problems), "--device", "cpu", "--trials", "2").exit_code == 0
    refused = cli("compare", "a", "c")
    assert refused.exit_code == 2 and "trials: A 5 | B 2" in refused.output
    forced = cli("compare", "a", "c", "--force")
    assert forced.exit_code == 0 and "differs trials: A 5 | B 2" in forced.output

    assert cli("export", "a", "--format", "jsonl").exit_code == 0
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert lines[0]["record"] == "run" and lines[0]["sessions"][0]["manifest"]["config"]["trials"] == 5
    assert [(row["problem_id"], row["status"]) for row in lines[1:]][-1] == ("level1/p5", "missing")
    assert cli("export", "a", "--format", "kernelbench", "-o", "eval_results.json").exit_code == 0
    results = json.loads((tmp_path / "eval_results.json").read_text())
    assert set(results) == {f"level1/{n}" for n in NAMES}
    assert results["level1/p5"] == [{"sample_id": 0, "compiled": False, "correctness": False, "runtime": -1.0,
                                     "runtime_stats": {}, "metadata": results["level1/p5"][0]["metadata"]}]
    assert results["level1/p1"][0]["correctness"] is True and results["level1/p1"][0]["compiled"] is True
    assert cli("export", "a", "--format", "csv").exit_code == 2


def test_parquet_export_needs_pyarrow(cli, tmp_path):
    problems, solutions = setup_run(tmp_path)
    cli("run", "--run", "a", "-s", str(solutions), "-p", str(problems), "--device", "cpu")
    done = cli("export", "a", "--format", "parquet")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        assert done.exit_code == 2 and "needs pyarrow" in done.output
        return
    assert done.exit_code == 0
    table = pq.read_table(tmp_path / "a.parquet")
    assert table.num_rows == 5 and b"kbench.config" in table.schema.metadata


def test_real_run_end_to_end(cli, tmp_path, monkeypatch):
    """The one test with the real judge: one solution evaluated, one problem missing."""
    problems = problem_dir(tmp_path / "problems", ["linear_tanh", "linear_tanh_unsolved"])
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "linear_tanh.py").write_text((SOLUTIONS / "honest_triton.py").read_text())
    calls = []

    def real(*args, **kwargs):
        calls.append(args[0].id)
        kwargs["timing"] = dataclasses.replace(kwargs["timing"], budget_seconds=0.5)  # the run's, quicker
        return judge.evaluate(*args, **kwargs)

    monkeypatch.setattr(cli_runs, "evaluate", real)
    command = ["run", "--run", "real", "-s", str(solutions), "-p", str(problems), "--device", "cpu", "--trials", "2"]
    done = cli(*command)
    assert done.exit_code == 0, done.output
    assert calls == ["level1/linear_tanh"]
    document = json.loads(cli("score", "real", "--json").output)
    assert document["n_problems"] == 2 and document["correct_rate"] == pytest.approx(0.5), done.output
    assert document["fast_p"]["eager"]["0"] == pytest.approx(0.5)
    assert document["geomean_speedup"]["eager"] > 0
    with Store(tmp_path / "kbench.db") as store:
        evaluation = {e.problem_id: e for e in store.evaluations("real")}["level1/linear_tanh"]
    assert evaluation.status == "correct" and evaluation.baselines["eager"] > 0
    assert evaluation.verdict["trials"] and evaluation.verdict["timing"]["median_ms"] == evaluation.runtime_ms
    assert cli(*command).exit_code == 0 and calls == ["level1/linear_tanh"]


def test_the_guard_policy_is_part_of_the_run_and_reaches_the_judge(tmp_path):
    problems = problem_dir(tmp_path / "problems", ["relu"])
    solutions = tmp_path / "solutions"
    fake_solution(solutions / "relu.py", "correct 1.0")
    judge = FakeJudge()
    with Store(tmp_path / "p.db") as store:
        start(store, problems, solutions, judge, policy="lenient")
        assert store.run("r").config.policy == "lenient"
    assert judge.policy == "lenient"
    with pytest.raises(ValueError, match="unknown policy"):
        start(Store(tmp_path / "q.db"), problems, solutions, judge, policy="lax")


def test_runs_default_to_the_lenient_policy_record_it_and_do_not_mix_or_compare_with_strict(cli, tmp_path):
    problems, solutions = setup_run(tmp_path, ["relu"], {"relu": "correct 1.0"})
    assert cli("run", "--run", "default", "--solutions", str(solutions), "--problems", str(problems)).exit_code == 0
    assert cli.judge.policy == "lenient"
    assert cli("run", "--run", "strict", "--solutions", str(solutions), "--problems", str(problems),
               "--policy", "strict").exit_code == 0
    assert cli.judge.policy == "strict"
    with Store(tmp_path / "kbench.db") as store:
        assert (store.run("default").config.policy, store.run("strict").config.policy) == ("lenient", "strict")
        assert store.sessions("strict")[0].manifest.config.policy == "strict"
    resumed = cli("run", "--run", "strict", "--policy", "lenient")
    assert resumed.exit_code == 2 and "policy: stored 'strict', now 'lenient'" in resumed.output
    compared = cli("compare", "default", "strict")
    assert compared.exit_code == 2 and "policy: A \"lenient\" | B \"strict\"" in compared.output
    assert json.loads(cli("score", "strict", "--json").output)["policy"] == "strict"


def test_score_counts_kernels_only_beside_every_correct_solution(cli, tmp_path):
    """One correct sample with its own kernels, one correct mixed with PyTorch (flagged by a
    style rule): 2/2 in the headline, 1/2 kernels only, in the JSON and the table."""
    problems, solutions = setup_run(tmp_path, ["kernel", "mixed"],
                                    {"kernel": "correct 2.0", "mixed": "correct 2.0 flag=torch-compute"})
    assert cli("run", "--run", "r", "--solutions", str(solutions), "--problems", str(problems)).exit_code == 0
    document = json.loads(cli("score", "r", "--json").output)
    assert document["correct_rate"] == 1.0 and document["fast_p"]["eager"]["1"] == 1.0
    assert document["correct_rate_kernels_only"] == 0.5 and document["fast_p_kernels_only"]["eager"]["1"] == 0.5
    assert document["fast_p_kernels_only_ci"]["eager"]["1"] == [0.0, 1.0]
    assert document["levels"]["1"]["fast_p_kernels_only"]["eager"]["1"] == 0.5
    table = cli("score", "r").output
    assert "correct, kernels only" in table and "all, kernels only" in table


def test_no_sandbox_is_part_of_the_run_and_reaches_the_judge(tmp_path):
    problems = problem_dir(tmp_path / "problems", ["relu"])
    solutions = tmp_path / "solutions"
    fake_solution(solutions / "relu.py", "correct 1.0")
    judge = FakeJudge()
    with Store(tmp_path / "s.db") as store:
        start(store, problems, solutions, judge)
        assert store.run("r").config.sandbox is True and judge.sandbox is True
        start(store, problems, solutions, judge, name="unconfined", sandbox=False)
        assert store.run("unconfined").config.sandbox is False and judge.sandbox is False


def test_a_bfloat16_run_judges_the_bfloat16_variants_and_leaves_out_problems_without_one(cli, tmp_path):
    problems, solutions = setup_run(tmp_path, names=["p1", "p2"], marks={"p1": "correct 1.0", "p2": "correct 1.0"})
    with_bf16 = problems / "p1.py"
    with_bf16.write_text('KBENCH_DTYPES = ("float32", "bfloat16")\n' + with_bf16.read_text())
    result = cli("run", "--run", "b", "-s", str(solutions), "-p", str(problems), "--device", "cpu", "--dtype", "bfloat16")
    assert result.exit_code == 0, result.output
    assert "no bfloat16 variant" in result.output
    assert cli.judge.calls == [("level1/p1", "p1.py")] and cli.judge.dtype == "bfloat16"
    with Store(tmp_path / "kbench.db") as store:
        assert store.run("b").config.dtype == "bfloat16"
        assert store.sessions("b")[0].manifest.config.dtype == "bfloat16"
    assert cli("run", "--run", "b", "--dtype", "float32").exit_code == 2  # a run keeps its dtype
    assert cli("run", "--run", "c", "-s", str(solutions), "-p", str(problems), "--dtype", "int8").exit_code == 2


def test_problems_needing_a_missing_module_are_left_out_with_their_reason(tmp_path):
    directory = problem_dir(tmp_path, ["p1", "p2"])
    needs = directory / "p2.py"
    needs.write_text('KBENCH_REQUIRES = ("kbench_no_such_module",)\n' + needs.read_text())
    problems, skipped = runner.runnable(runner.select_problems([str(directory)]))
    assert [p.id for p in problems] == ["level1/p1"]
    assert skipped == {"level1/p2": "needs kbench_no_such_module"}
    (directory / "p1.py").unlink()
    with pytest.raises(runner.RunError, match="every selected problem is skipped"):
        runner.runnable(runner.select_problems([str(directory)]))


def test_run_takes_a_comma_list_of_baselines_a_limit_and_prints_json(cli, tmp_path):
    problems, solutions = setup_run(tmp_path, marks={"p1": "correct 2.0", "p2": "incorrect", "p3": "correct 1.0"})
    done = cli("run", "--run", "r", "--solutions", str(solutions), "--problems", str(problems), "--device", "cpu",
               "--baseline", "eager,compile", "--limit", "2", "--json")
    assert done.exit_code == 0, done.output
    assert cli.judge.baselines == ("eager", "compile") and len(cli.judge.calls) == 2
    document = json.loads(done.stdout)  # the score as JSON on stdout; the progress went to stderr
    assert document["n_problems"] == 2 and document["manifest"]["config"]["limit"] == 2
    assert "[2/2] level1/p2 #0: incorrect: made by hand: incorrect" in done.stderr
    again = cli("run", "--run", "r", "--limit", "3")
    assert again.exit_code == 2 and "limit: stored 2, now 3" in again.output
    assert "note: not meaningful on a CPU: these speedups were timed on a CPU, where Triton kernels run through " \
        "Triton's interpreter" in cli("score", "r").output


def test_without_pyarrow_the_parquet_hint_installs_into_this_environment(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path)
    cli("run", "--run", "a", "-s", str(solutions), "-p", str(problems), "--device", "cpu")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow fails as when it is not installed
    done = cli("export", "a", "--format", "parquet")
    assert done.exit_code == 2 and f"needs pyarrow ({sys.executable} -m pip install pyarrow, or pip install -e " \
        "'.[parquet]' in the kbench checkout)" in done.output


def test_a_run_on_a_gpu_measures_the_compile_column_unless_told_otherwise(tmp_path):
    problems, solutions = setup_run(tmp_path)
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    common = dict(selection=[str(problems)], solutions=solutions, size="small", trials=5, timeout=300.0)
    assert runner.run_config(plan, device="cuda:0", **common).baselines == ("eager", "compile")
    assert runner.run_config(plan, device="cpu", **common).baselines == ("eager",)
    assert runner.run_config(plan, device="cuda:0", baselines=("eager",), **common).baselines == ("eager",)


def test_a_run_builds_ahead_with_each_solutions_problem_at_the_runs_size_and_dtype(tmp_path, monkeypatch):
    """So that a solution compiling in ``ModelNew.__init__`` is built ahead, not on the device."""
    problems, solutions = setup_run(tmp_path, names=["p1", "p2"], marks={"p1": "correct 2.0", "p2": "correct 1.5"})
    (solutions / "p1.py").write_text((solutions / "p1.py").read_text() + "# load_inline\n")  # p1 builds, p2 not
    built = []
    monkeypatch.setattr(judge, "build", lambda solution, device, **kwargs: built.append(kwargs))
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    config = runner.run_config(plan, selection=[str(problems)], solutions=solutions, device="cpu", size="small",
                               trials=5, timeout=300.0, dtype="bfloat16")
    with Store(tmp_path / "kbench.db") as store:
        runner.execute(store, "r", config, plan, evaluate=FakeJudge(), manifest=manifest_for(config),
                       devices=["cpu"], build_jobs=1)
    assert [(k["problem"].id, k["size"], k["dtype"]) for k in built] == [("level1/p1", "small", "bfloat16")]
