"""What users meet around a run (issue 31): KernelBench's numbering and precisions, exit
codes a pipeline can use, errors without tracebacks, and one vocabulary of options."""

import json
import os

import pytest
from run_fixtures import FakeJudge, fake_solution, problem_dir
from typer.testing import CliRunner

from kbench.cli import app
from kbench.cli import run as cli_runs
from kbench.runs import runner
from kbench.runs.store import Store

NAMES = ["p1", "p2", "p3"]


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """Runs the kbench app in this process, in tmp_path, with a fake judge."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KBENCH_DB", raising=False)
    fake = FakeJudge()
    monkeypatch.setattr(cli_runs, "evaluate", fake)
    runner_ = CliRunner()

    def invoke(*args):
        return runner_.invoke(app, [str(a) for a in args], catch_exceptions=False)

    invoke.judge = fake
    return invoke


def setup_run(tmp_path, names=NAMES, marks=None):
    problems = problem_dir(tmp_path / "problems", names)
    solutions = tmp_path / "solutions"
    solutions.mkdir(exist_ok=True)
    for name, mark in (marks if marks is not None else {name: "correct 2.0" for name in names}).items():
        fake_solution(solutions / f"{name}.py", mark)
    return problems, solutions


def test_solution_entries_that_are_no_file_are_named_for_what_they_are(cli, tmp_path):
    problems, solutions = setup_run(tmp_path, names=["p1", "p2", "p3", "p4"], marks={})
    (solutions / "p1.py").symlink_to(tmp_path / "nowhere.py")
    (solutions / "p2.py").mkdir()
    os.mkfifo(solutions / "p3.py")  # read as a file, it would block the run forever
    fake_solution(solutions / "p4" / "a.py", "correct 2.0")
    os.mkfifo(solutions / "p4" / "b.py")
    done = cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu")
    assert done.exit_code == 0, done.output
    assert "match no selected problem" not in done.output
    assert "p1.py in " in done.output and "is a broken symbolic link (to " in done.output
    assert "p2.py in " in done.output and "is a directory, not a file" in done.output
    assert "is not a regular file: a FIFO: not a solution of level1/p3 (recorded as missing)" in done.output
    assert "p4/b.py in " in done.output and "(its other samples are judged)" in done.output
    with Store(tmp_path / "kbench.db") as store:
        reasons = {e.problem_id: (e.status, e.reason) for e in store.evaluations("r")}
    assert reasons["level1/p1"][0] == "missing" and "p1.py is a broken symbolic link" in reasons["level1/p1"][1]
    assert "p2.py is a directory" in reasons["level1/p2"][1]
    assert "p3.py is not a regular file" in reasons["level1/p3"][1]
    assert reasons["level1/p4"] == ("correct", "made by hand: correct") and cli.judge.calls == [("level1/p4", "a.py")]


def test_a_readable_file_through_a_link_is_a_solution(tmp_path):
    problems, solutions = setup_run(tmp_path, names=["p1"], marks={})
    real = fake_solution(tmp_path / "elsewhere" / "kernel.py", "correct 2.0")
    (solutions / "p1.py").symlink_to(real)
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    assert [s.name for s in plan.samples] == ["p1.py"] and plan.faults == {}


@pytest.mark.parametrize("format", ["jsonl", "kernelbench", "parquet"])
def test_export_to_a_path_that_cannot_be_written_is_a_usage_error(cli, tmp_path, format):
    problems, solutions = setup_run(tmp_path)
    assert cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu").exit_code == 0
    pytest.importorskip("pyarrow") if format == "parquet" else None
    for target in (tmp_path / "no" / "such" / "folder" / "out", tmp_path):  # a missing folder, a directory
        done = CliRunner().invoke(app, ["export", "r", "--format", format, "-o", str(target)])
        assert done.exit_code == 2, done.output
        assert f"error: cannot write {target}" in done.output and done.exception.__class__ is SystemExit


def test_evaluate_many_takes_one_device_and_refuses_unknown_options_at_the_call(monkeypatch):
    import kbench
    import kbench.judge.executor as executor
    from conftest import PROBLEM
    from run_fixtures import make_verdict

    seen = []
    monkeypatch.setattr(executor, "evaluate", lambda problem, solution, device, **options: seen.append(
        (device, options)) or make_verdict(problem.id, "correct", 1.0))
    solution = kbench.Solution(source="# fake: correct 1.0\nclass ModelNew: pass\n")
    verdicts = dict(kbench.evaluate_many([(PROBLEM, solution), (PROBLEM, solution)], device="cpu", trials=1))
    assert [v.status for v in verdicts.values()] == ["correct", "correct"]
    assert seen == [("cpu", {"trials": 1})] * 2
    assert dict(kbench.evaluate_many([(PROBLEM, solution)], "cpu", trials=1))[0].status == "correct"  # devices="cpu"
    with pytest.raises(TypeError, match="evaluate\\(\\) does not take: dtypes"):
        kbench.evaluate_many([(PROBLEM, solution)], device="cpu", dtypes="bfloat16")  # refused before iterating
    with pytest.raises(TypeError, match="devices=\\[...\\] or device=..., not both"):
        kbench.evaluate_many([(PROBLEM, solution)], ["cpu"], device="cpu")
    with pytest.raises(ValueError, match="unknown device"):
        kbench.evaluate_many([(PROBLEM, solution)], device="tpu")
    assert len(seen) == 3


def test_source_text_given_as_a_path_says_how_to_pass_it():
    import kbench

    source = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"
    with pytest.raises(kbench.SolutionError, match=r"source code, not a path.*kbench.Solution\(source=text\)"):
        kbench.evaluate("level1/relu", source, device="cpu")
    with pytest.raises(kbench.SolutionError, match="source code, not a path"):
        kbench.evaluate_many([("level1/relu", source * 500)])
    with pytest.raises(kbench.ProblemError, match="source code, not a suite id or a path"):
        kbench.find_problem("import torch\nclass Model(torch.nn.Module):\n    pass\n" * 200)


class FailingJudge(FakeJudge):
    """A judge that fails outside the candidate (a lost machine) for the problems named."""

    def __init__(self, failing):
        super().__init__()
        self.failing = failing

    def __call__(self, problem, solution, device, **kwargs):
        if problem.id in self.failing:
            self.calls.append((problem.id, solution.path.name))
            raise RuntimeError("the GPU fell off the bus")
        return super().__call__(problem, solution, device, **kwargs)


def test_fail_on_error_stops_the_run_at_the_nth_failure_outside_the_candidates(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path, names=["p1", "p2", "p3", "p4"])
    monkeypatch.setattr(cli_runs, "evaluate", FailingJudge({"level1/p1", "level1/p3", "level1/p4"}))
    done = cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu", "--fail-on-error", "2")
    assert done.exit_code == 1, done.output
    assert "stopped (--fail-on-error 2): 2 failures outside the candidates (infra_error 2)" in done.output
    assert "the last, level1/p3 #0: Traceback" in done.output and "resume with `kbench run --run r" in done.output
    with Store(tmp_path / "kbench.db") as store:
        assert {e.problem_id: e.status for e in store.evaluations("r")} == {
            "level1/p1": "infra_error", "level1/p2": "correct", "level1/p3": "infra_error"}  # p4 never started
    monkeypatch.setattr(cli_runs, "evaluate", FakeJudge())
    resumed = cli("run", "--run", "r", "--fail-on-error", "2")  # not a setting of the run: resumes with any
    assert resumed.exit_code == 0, resumed.output
    with Store(tmp_path / "kbench.db") as store:
        assert {e.status for e in store.evaluations("r")} == {"correct"}
    assert cli("run", "--run", "s", "-s", solutions, "-p", problems, "--fail-on-error", "0").exit_code == 2


def test_a_run_where_every_sample_failed_outside_the_candidates_exits_1(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path, names=["p1", "p2"], marks={"p1": "correct 1.0"})
    monkeypatch.setattr(cli_runs, "evaluate", FailingJudge({"level1/p1"}))
    done = cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu")
    assert done.exit_code == 1 and "nothing was judged: every sample failed outside the candidates (infra_error 1)" \
        in done.output
    monkeypatch.setattr(cli_runs, "evaluate", FakeJudge())
    assert cli("run", "--run", "r").exit_code == 0  # judged now: p1 correct, p2 missing


def test_a_model_run_whose_every_request_failed_exits_1_without_claiming_a_solution(cli, serve, tmp_path,
                                                                                   monkeypatch):
    from model_server import Answer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-test\n")
    problems = problem_dir(tmp_path / "problems", ["p1"])
    server = serve(lambda seen, n: Answer("overloaded", status=503))
    done = cli("run", "--run", "m", "--model", "openai/test-model", "--base-url", server.url, "-p", problems,
               "--device", "cpu", "--max-retries", "0")
    assert done.exit_code == 1, done.output
    assert "coverage: 0 of 1 problems with a solution" in done.output and "1 of 1 problems" not in done.output
    assert "nothing was judged: every sample failed outside the candidates (generation_error 1)" in done.output
    assert cli.judge.calls == []
    assert "generation_error" in cli("score", "m").output and cli("score", "m").exit_code == 0


def kernelbench_folder(root):
    """A folder laid out as KernelBench's problems: level1/<P>_<Name>.py, level2/..."""
    for level, names in ((1, ["19_ReLU", "2_Matmul", "10_Conv"]), (2, ["1_Conv_ReLU"])):
        problem_dir(root, names, level=level)
    return root


def test_kernelbench_numbers_name_its_problems(tmp_path, monkeypatch):
    from kbench.suite import find_problem

    kb = kernelbench_folder(tmp_path / "KernelBench")
    ids = lambda *items: [p.id for p in runner.select_problems([str(item) for item in items])]  # noqa: E731
    assert ids(kb / "level1" / "19") == ["level1/19_ReLU"]
    assert ids(kb / "level_1_problem_2", kb / "level2" / "01") == ["level1/2_Matmul", "level2/1_Conv_ReLU"]
    assert ids(kb) == ["level1/2_Matmul", "level1/10_Conv", "level1/19_ReLU", "level2/1_Conv_ReLU"]
    assert ids(kb / "level1") == ids(kb / "level1" / "2", kb / "level1" / "10", kb / "level1" / "19")  # same ids
    assert find_problem(kb / "level1" / "19").id == "level1/19_ReLU"
    assert find_problem(str(kb / "level1" / "19")).level == 1
    for nothing in (kb / "level1" / "7", kb / "level_3_problem_1", kb / "level1" / "x19"):
        with pytest.raises(Exception, match="no problem file or suite id"):
            runner.select_problems([str(nothing)])
    monkeypatch.chdir(kb)  # a relative reference is kept absolute, so that a run resumes from anywhere
    assert runner.normalise_selection(["level1/19"]) == (str(kb / "level1" / "19"),)
    assert runner.normalise_selection(["level1"]) == (str(kb / "level1"),)


def test_show_takes_kernelbench_numbers_and_the_export_is_in_number_order(cli, tmp_path):
    kb = kernelbench_folder(tmp_path / "KernelBench")
    solutions = tmp_path / "runs" / "mine"
    for problem, mark in ((19, "correct 2.0"), (2, "incorrect"), (10, "correct 0.5")):
        fake_solution(solutions / f"level_1_problem_{problem}_sample_0_kernel.py", mark)
    selection = ",".join(str(kb / "level1" / str(n)) for n in (19, 2, 10))  # not in number order
    assert cli("run", "--run", "r", "-s", solutions, "-p", selection, "--device", "cpu").exit_code == 0
    for query in ("level1/19", "level_1_problem_19", "level1/19_ReLU"):
        shown = cli("show", "r", query)
        assert shown.exit_code == 0 and shown.output.startswith("level1/19_ReLU (19_ReLU, level 1)"), shown.output
    assert cli("export", "r", "--format", "kernelbench", "-o", "eval_results.json").exit_code == 0
    results = json.loads((tmp_path / "eval_results.json").read_text())
    assert list(results) == ["2", "10", "19"]
    # As KernelBench's scripts/benchmark_eval_analysis.py reads it: sample 0 of each problem, paired by
    # position with its baseline file (results/timing/<hardware>/<baseline>.json), which lists a level's
    # problems in number order.
    baseline = {"level1": {"2_Matmul.py": {"mean": 1.0}, "10_Conv.py": {"mean": 1.0}, "19_ReLU.py": {"mean": 1.0}}}
    samples = [next(s for s in entries if s["sample_id"] == 0) for entries in results.values()]
    speedups = [b["mean"] / s["runtime"] if s["correctness"] else 0.0
                for s, b in zip(samples, baseline["level1"].values())]
    assert speedups == [0.0, pytest.approx(0.5), pytest.approx(2.0)]
    assert [s["metadata"]["kbench_problem"] for s in samples] == ["level1/2_Matmul", "level1/10_Conv",
                                                                  "level1/19_ReLU"]


class RecordingJudge(FakeJudge):
    def __call__(self, problem, solution, device, **kwargs):
        self.problem = problem
        return super().__call__(problem, solution, device, **kwargs)


def test_a_kernelbench_precision_casts_every_problem_and_is_kept_apart(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path, names=["p1", "p2"])
    (problems / "p2.py").write_text('KBENCH_DTYPES = ("float32", "bfloat16")\nKBENCH_DTYPE_SIZES = {"bfloat16": '
                                    '{"batch_size": 64}}\nKBENCH_TOLERANCE = {"bfloat16": {"atol": 0.05}}\n'
                                    + (problems / "p2.py").read_text())
    judge = RecordingJudge()
    monkeypatch.setattr(cli_runs, "evaluate", judge)
    done = cli("run", "--run", "kb", "-s", solutions, "-p", problems, "--device", "cpu", "--precision", "bf16")
    assert done.exit_code == 0, done.output
    assert [c[0] for c in judge.calls] == ["level1/p1", "level1/p2"] and judge.dtype == "bfloat16"
    # judged as KernelBench does: any problem, at the file's sizes, tolerance 1e-2 (not its own variant's)
    assert (judge.problem.dtypes, judge.problem.dtype_sizes) == (("bfloat16",), {})
    assert judge.problem.tolerance == {"bfloat16": {"atol": 1e-2, "rtol": 1e-2}}
    with Store(tmp_path / "kbench.db") as store:
        config = store.run("kb").config
        assert (config.precision, config.dtype) == ("bf16", "bfloat16")
        assert store.sessions("kb")[0].manifest.config.precision == "bf16"
    assert cli("run", "--run", "kb").exit_code == 0  # resumed as stored
    refused = cli("run", "--run", "kb", "--dtype", "bfloat16")
    assert refused.exit_code == 2 and "precision: stored 'bf16', now None" in refused.output
    both = cli("run", "--run", "x", "-s", solutions, "-p", problems, "--precision", "bf16", "--dtype", "bfloat16")
    assert both.exit_code == 2 and "give one of them" in both.output
    assert cli("run", "--run", "x", "-s", solutions, "-p", problems, "--precision", "fp8").exit_code == 2

    own = cli("run", "--run", "own", "-s", solutions, "-p", problems, "--device", "cpu", "--dtype", "bfloat16")
    assert own.exit_code == 0 and "no bfloat16 variant" in own.output  # p1 has none: left out
    assert cli("run", "--run", "fp32", "-s", solutions, "-p", problems, "--device", "cpu").exit_code == 0
    for other in ("own", "fp32"):
        compared = cli("compare", "kb", other)
        assert compared.exit_code == 2 and 'precision: A "bf16" | B null' in compared.output, compared.output
    assert cli("compare", "kb", "kb").exit_code == 0


def test_a_precision_has_baseline_cache_keys_of_its_own(tmp_path):
    """A compiled column cached for a problem's bf16 variant (at its KBENCH_DTYPE_SIZES) is not
    the same measurement as the problem cast to bf16 at its written sizes (--precision bf16)."""
    from kbench.judge.trusted.baselines import Environment, cache_key
    from kbench.judge.trusted.reference import ReferenceSide
    from kbench.judge.protocol.timing import TimingSettings
    from kbench.suite import kernelbench
    from kbench.suite.problem import load_problem

    path = problem_dir(tmp_path, ["p"]) / "p.py"
    path.write_text('KBENCH_DTYPES = ("float32", "bfloat16")\nKBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 64}}\n'
                    + path.read_text())
    problem = load_problem(path)
    side = lambda p, dtype: ReferenceSide(p, "cpu", "default", dtype, TimingSettings(), 0)  # noqa: E731
    assert side(problem, "float32").cache_sizes() is None  # float32 keys as they always were
    assert side(problem, "bfloat16").cache_sizes() == {"batch_size": 64}
    assert side(kernelbench.at_precision(problem, "bf16"), "bfloat16").cache_sizes() == {}
    env = Environment(device_name="cpu", driver=None, versions={}, settings={}, timing={})
    keys = {cache_key("abc", "default", "bfloat16", "compile", env, sizes) for sizes in ({}, {"batch_size": 64}, None)}
    assert len(keys) == 3


def test_a_command_agents_evaluate_tool_judges_at_the_runs_precision(tmp_path):
    from kbench.agents.command_agent import CommandProvider, JudgeSettings

    judge = JudgeSettings(device="cpu", size="small", trials=2, timeout=60.0, policy="lenient", dtype="bfloat16",
                          precision="bf16")
    provider = CommandProvider("/bin/true", judge=judge, time_limit=10, version="1")
    command = provider._evaluate_command(tmp_path / "c.py", tmp_path / "p.py", [])
    assert command[command.index("--precision") + 1] == "bf16" and "--dtype" not in command
    own = CommandProvider("/bin/true", judge=JudgeSettings("cpu", "small", 2, 60.0, "lenient", dtype="bfloat16"),
                          time_limit=10, version="1")
    assert "--precision" not in own._evaluate_command(tmp_path / "c.py", tmp_path / "p.py", [])


# --- issue 59: one writer per run, builds ahead by default, --no-timing for runs too ------------------

HOLDER = """
import sys, time
from kbench.runs.writer import claimed
with claimed(sys.argv[1], sys.argv[2]):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_second_run_of_a_run_being_judged_refuses_at_once_and_a_dead_holder_blocks_nothing(cli, tmp_path):
    import signal
    import subprocess
    import sys

    from kbench.runs import writer

    problems, solutions = setup_run(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "kbench.db"), "r"], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert holder.stdout.readline().strip() == "held"
        done = cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu")
        assert done.exit_code == writer.BUSY_EXIT == 4, done.output
        assert f"run 'r' is being judged by pid {holder.pid} on " in " ".join(done.output.split())
        assert cli.judge.calls == [] and not (tmp_path / "kbench.db").exists()  # refused before the store opened
        other = cli("run", "--run", "other", "-s", solutions, "-p", problems, "--device", "cpu")
        assert other.exit_code == 0, other.output  # another run of the same store is not held
    finally:
        holder.send_signal(signal.SIGKILL)  # as a lost machine or kill -9 would end it: the lock file stays
        holder.wait()
    assert writer.lock_path(tmp_path / "kbench.db", "r").exists()
    done = cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu")
    assert done.exit_code == 0, done.output
    assert not writer.lock_path(tmp_path / "kbench.db", "r").exists()  # released at the end


def test_an_empty_patch_is_a_usage_error_and_an_empty_verdict_says_so(tmp_path):
    from kbench.repo import Patch, evaluate_patch, find_task

    empty = tmp_path / "fix.patch"
    empty.write_text("\n")
    done = CliRunner().invoke(app, ["eval-patch", str(empty), "--task", "tinylm/fused-rmsnorm", "--device", "cpu"])
    assert done.exit_code == 2 and f"patch file {empty} is empty: nothing to judge" in " ".join(done.output.split())
    assert "allow-empty" not in done.output and len(done.output.strip().splitlines()) <= 2
    verdict = evaluate_patch(find_task("tinylm/fused-rmsnorm"), Patch(""), "cpu", expert=False, sandbox=False)
    assert (verdict.status, verdict.reason) == ("compile_error", "the patch is empty: it changes nothing")


def test_builds_run_ahead_by_default_on_gpus_and_never_on_a_cpu(monkeypatch):
    import kbench.judge.executor as executor
    from kbench.judge.builds.ahead import build_slots

    assert executor.default_build_jobs(["cuda:0"], cpus=16) == 10 == build_slots(14, 1, 16, judging=True)
    assert executor.default_build_jobs(["cuda:0", "cuda:1"], cpus=16) == 8
    assert executor.default_build_jobs(["cuda:0"], cpus=2) == 1  # at least one: the GPU would wait for every build
    assert executor.default_build_jobs(["cpu"], cpus=16) == 0  # the CPU's evaluations run on the cores
    made = []

    class Recorder:
        def __init__(self, devices, build_jobs=0, ahead=None):
            made.append((list(devices), build_jobs, ahead))

    monkeypatch.setattr(cli_runs.judge, "LocalExecutor", Recorder)
    monkeypatch.setattr(cli_runs, "default_build_jobs", lambda devices: executor.default_build_jobs(devices, cpus=16))
    assert isinstance(cli_runs._executor("local", None, None, None, "cuda:0"), Recorder)
    assert cli_runs._executor("local", None, None, None, "cuda:0", sandbox=False) is not None
    assert made == [(["cuda:0"], 10, None), (["cuda:0"], 10, False)]  # no spare workers unsandboxed
    assert cli_runs._executor("local", None, None, 0, "cuda:0") is None  # --build-jobs 0: each builds its own
    assert cli_runs._executor("local", None, None, None, "cpu") is None  # in turn on a CPU
    monkeypatch.setattr(executor, "resolve_device", lambda device: device)
    monkeypatch.setattr(executor, "available_cpus", lambda: 16)
    assert executor.make_executor("local", ["cuda:0"]).build_jobs == 10  # evaluate_many's default
    assert executor.make_executor("local", ["cuda:0"], 0).build_jobs == 0
    help_text = " ".join(CliRunner().invoke(app, ["run", "-h"], terminal_width=200).output.split())
    assert "[default: on GPUs, what the CPUs beside them take (10 on 16 CPUs and one GPU); none on a CPU" in help_text


def test_a_run_without_timing_judges_correctness_only_and_scores_no_speedup(cli, tmp_path, monkeypatch):
    problems, solutions = setup_run(tmp_path)
    asked = []
    judge = cli.judge

    def untimed(problem, solution, device, *, measure_time=True, **options):
        asked.append(measure_time)
        return judge(problem, solution, device, **options)

    monkeypatch.setattr(cli_runs, "evaluate", untimed)
    done = cli("run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu", "--no-timing", "--json")
    assert done.exit_code == 0, done.output
    assert asked == [False] * 3
    document = json.loads(done.stdout)
    assert document["columns"] == [] and document["fast_p"] == {} and document["correct_rate"] == 1.0
    assert document["manifest"]["config"]["measure_time"] is False and document["cpu_note"] is None
    again = cli("run", "--run", "r", "--timing")
    assert again.exit_code == 2 and "measure_time: stored False, now True" in again.output
    assert "not timed (--no-timing): correctness only" in cli("score", "r").output


def test_a_run_judged_by_kernelbench_s_criterion_records_it_and_passes_it_to_every_evaluation(cli, tmp_path,
                                                                                             monkeypatch):
    """kbench run --correctness (issue 58): as kbench eval's, kept with the run's settings, so that a
    resumed run keeps it and a run given the other criterion is refused; the default passes nothing."""
    problems, solutions = setup_run(tmp_path)
    asked = []
    judge = cli.judge

    def judged(problem, solution, device, *, correctness="truth", **options):
        asked.append(correctness)
        return judge(problem, solution, device, **options)

    monkeypatch.setattr(cli_runs, "evaluate", judged)
    done = cli("run", "--run", "kb", "-s", solutions, "-p", problems, "--device", "cpu", "--correctness", "kernelbench",
               "--json")
    assert done.exit_code == 0, done.output
    assert asked == ["kernelbench"] * 3
    assert json.loads(done.stdout)["manifest"]["config"]["correctness"] == "kernelbench"
    again = cli("run", "--run", "kb", "--correctness", "truth")
    assert again.exit_code == 2 and "correctness: stored 'kernelbench', now 'truth'" in again.output, again.output
    default = cli("run", "--run", "t", "-s", solutions, "-p", problems, "--device", "cpu", "--json")
    assert default.exit_code == 0 and asked == ["kernelbench"] * 3 + ["truth"] * 3
    assert json.loads(default.stdout)["manifest"]["config"]["correctness"] == "truth"
    wrong = cli("run", "--run", "w", "-s", solutions, "-p", problems, "--device", "cpu", "--correctness", "exact")
    assert wrong.exit_code == 2 and "--correctness 'exact': choose from truth, kernelbench" in wrong.output
