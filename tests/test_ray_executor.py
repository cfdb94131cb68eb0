"""The Ray executor on a local Ray instance (two CPUs, no GPU): the same verdicts and scores
as the local executor, results streamed as they finish, resumption, and Ray never imported
where it was not asked for."""

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import SOLUTIONS
from run_fixtures import FakeJudge, fake_solution, problem_dir
from typer.testing import CliRunner

from kbench import judge
from kbench.cli import app
from kbench.cli import run as cli_runs
from kbench.judge.ray_executor import RayExecutor
from kbench.runs import runner
from kbench.runs.score import columns_of, outcomes, score
from kbench.runs.store import Store

ray = pytest.importorskip("ray")
TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module, as a laptop would start it; its workers find
    kbench and these tests' modules (FakeJudge) on the path the driver has."""
    old = os.environ.get("PYTHONPATH")
    paths = [str(TESTS), *(os.path.abspath(p) for p in (old or "").split(os.pathsep) if p)]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 << 20)
    try:
        yield ray
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def test_results_come_back_with_their_index_builds_run_ahead_and_a_jobs_error_is_raised_here(local_ray, tmp_path):
    built = tmp_path / "built"
    built.mkdir()

    def run(item: int, device: str) -> tuple[int, str]:
        if item == 7:
            raise ValueError("job 7 failed")
        return item * item, device

    def prebuild(item: int, device: str) -> None:
        (built / f"{item}-{device}").touch()

    executor = RayExecutor(device="cpu", build_jobs=1)
    assert sorted(executor.map(list(range(4)), run, prebuild)) == [(i, (i * i, "cpu")) for i in range(4)]
    assert {p.name for p in built.iterdir()} <= {f"{i}-cpu" for i in range(4)}
    with pytest.raises(ValueError, match="job 7 failed"):
        list(RayExecutor(device="cpu").map(list(range(10)), run))
    with pytest.raises(ValueError, match="has no GPU"):
        list(RayExecutor(device="cuda").map([1], run))
    assert RayExecutor(device="cpu", build_jobs=2).describe() | {"ray": None} == {
        "kind": "ray", "address": "local", "device": "cpu", "build_jobs": 2, "ray": None}


def start(store, problems, solutions, evaluate, executor=None, name="r", listener=None):
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    config = runner.run_config(plan, selection=[str(problems)], solutions=solutions, device="cpu", size="small",
                               trials=2, timeout=300.0)
    return runner.execute(store, name, config, plan, evaluate=evaluate, listener=listener, executor=executor)


class StopAfter:
    """A listener that interrupts the run (as Ctrl-C would) once ``n`` verdicts are stored."""

    def __init__(self, n: int):
        self.n, self.seen = n, 0

    def started(self, total, done):
        pass

    def finished(self, record):
        self.seen += 1
        if self.seen == self.n:
            raise KeyboardInterrupt


def test_an_interrupted_ray_run_resumes_with_nothing_lost_or_judged_twice(local_ray, tmp_path):
    names = [f"p{i}" for i in range(6)]
    problems = problem_dir(tmp_path / "problems", names)
    solutions = tmp_path / "solutions"
    for name in names[:-1]:
        fake_solution(solutions / f"{name}.py", "correct 1.5")
    with Store(tmp_path / "k.db") as store:
        with pytest.raises(KeyboardInterrupt):
            start(store, problems, solutions, FakeJudge(), RayExecutor(), listener=StopAfter(3))
        kept = {e.problem_id for e in store.evaluations("r")}
        assert len(kept) == 4 and "level1/p5" in kept  # the missing one, and three verdicts
        made = start(store, problems, solutions, FakeJudge(), RayExecutor(build_jobs=1))
        final = store.evaluations("r")
        sessions = store.sessions("r")
    assert sorted(e.problem_id for e in made) == sorted({f"level1/{n}" for n in names} - kept)
    assert len(final) == len(names) and all(e.status == "correct" for e in final if e.problem_id != "level1/p5")
    assert [s.manifest.executor["kind"] for s in sessions] == ["ray", "ray"]
    assert sessions[1].manifest.executor["build_jobs"] == 1 and sessions[1].manifest.executor["address"] == "local"


KILLED_RAY_RUN = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import ray
    from kbench.judge.ray_executor import RayExecutor
    from kbench.runs import runner
    from kbench.runs.store import Store
    from run_fixtures import FakeJudge

    class SlowJudge(FakeJudge):
        def __call__(self, *args, **kwargs):
            time.sleep(0.5)
            return super().__call__(*args, **kwargs)

    problems, solutions = Path(sys.argv[1]), Path(sys.argv[2])
    plan = runner.plan_replay(runner.select_problems([str(problems)]), solutions)
    config = runner.run_config(plan, selection=[str(problems)], solutions=solutions, device="cpu", size="small",
                               trials=2, timeout=300.0)
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=128 << 20)
    with Store(sys.argv[3]) as store:
        runner.execute(store, "r", config, plan, evaluate=SlowJudge(), executor=RayExecutor())
    """
)


@pytest.mark.slow
def test_a_killed_ray_run_loses_nothing_and_resumes(local_ray, tmp_path):
    """The driver, its local Ray instance and its tasks killed at once (SIGKILL to the process
    group, as a scheduler ends a job); the resumed run judges exactly what was not stored."""
    names = [f"p{i}" for i in range(12)]
    problems = problem_dir(tmp_path / "problems", names)
    solutions = tmp_path / "solutions"
    for name in names:
        fake_solution(solutions / f"{name}.py", "correct 1.5")
    script = tmp_path / "killed_ray_run.py"
    script.write_text(KILLED_RAY_RUN)
    process = subprocess.Popen([sys.executable, str(script), str(problems), str(solutions), str(tmp_path / "k.db")],
                               start_new_session=True)
    deadline = time.monotonic() + 120
    recorded: list = []
    try:
        while time.monotonic() < deadline and len(recorded) < 3 and process.poll() is None:
            time.sleep(0.2)
            try:
                with Store(tmp_path / "k.db") as store:
                    recorded = store.evaluations("r")
            except Exception:  # not created yet
                recorded = []
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert 3 <= len(recorded) < len(names), "the run finished (or failed) before it could be killed"
    with Store(tmp_path / "k.db") as store:
        survived = {e.problem_id for e in store.evaluations("r")}
        made = start(store, problems, solutions, FakeJudge(), RayExecutor())
        final = store.evaluations("r")
    assert survived >= {e.problem_id for e in recorded}
    assert sorted(e.problem_id for e in made) == sorted({f"level1/{n}" for n in names} - survived)
    assert len(final) == len(names) and all(e.status == "correct" for e in final)


@pytest.mark.slow
def test_the_ray_executor_gives_the_local_executors_verdicts_and_scores(local_ray, tmp_path):
    """The real judge on three solutions (correct, incorrect, not Python) and one problem
    without a solution: once in turn here, once as Ray tasks."""
    problems = problem_dir(tmp_path / "problems", ["right", "wrong", "broken", "unsolved"])
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    for name, source in (("right", "honest_triton.py"), ("wrong", "wrong_values.py"), ("broken", "syntax_error.py")):
        (solutions / f"{name}.py").write_text((SOLUTIONS / source).read_text())

    def quick(*args, **kwargs):
        kwargs["timing"] = dataclasses.replace(kwargs["timing"], budget_seconds=0.5)
        return judge.evaluate(*args, **kwargs)

    scores = {}
    with Store(tmp_path / "k.db") as store:
        for name, executor in (("local", judge.LocalExecutor(["cpu"], build_jobs=1)),
                               ("ray", RayExecutor(device="cpu", build_jobs=1))):
            start(store, problems, solutions, quick, executor, name=name)
            data = store.load(name)
            result = score(outcomes(data), columns_of(data)).overall
            statuses = {e.problem_id: e.status for e in data.evaluations}
            # fast_0 alone: above 0 a fast_p turns on a CPU timing (the Triton interpreter's speedup
            # lies near 0.5 here; the two runs once fell on either side of it)
            scores[name] = statuses, result.correct_rate.value, result.fast_p["eager"][0.0].value, result.statuses
    assert scores["local"][0] == {"level1/right": "correct", "level1/wrong": "incorrect",
                                  "level1/broken": "compile_error", "level1/unsolved": "missing"}
    assert scores["ray"] == scores["local"]


def test_the_cli_takes_the_ray_executor_and_refuses_what_does_not_go_with_it(local_ray, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KBENCH_DB", raising=False)
    monkeypatch.setattr(cli_runs, "evaluate", FakeJudge())
    problems = problem_dir(tmp_path / "problems", ["p1", "p2"])
    solutions = tmp_path / "solutions"
    for name in ("p1", "p2"):
        fake_solution(solutions / f"{name}.py", "correct 2.0")

    def cli(*args):
        return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)

    files = ["run", "--run", "r", "-s", solutions, "-p", problems, "--device", "cpu"]
    assert "Ray gives each evaluation a GPU" in cli(*files, "--executor", "ray", "--gpus", "0").output
    assert "--address joins a Ray cluster" in cli(*files, "--address", "auto").output
    assert "choose from local, ray" in cli(*files, "--executor", "dask").output
    asked = cli("run", "--run", "m", "--model", "openai/x", "-p", problems, "--executor", "ray")
    assert asked.exit_code == 2 and "runs of files" in asked.output
    done = cli(*files, "--executor", "ray", "--build-jobs", "1", "--plain")
    assert done.exit_code == 0, done.output
    with Store(tmp_path / "kbench.db") as store:
        assert {e.status for e in store.evaluations("r")} == {"correct"}
        assert store.sessions("r")[0].manifest.executor["kind"] == "ray"


def test_without_ray_the_error_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'ray>=2.10'.*\.\[ray\]"):
        RayExecutor()
    with pytest.raises(ImportError, match="pip install"):
        next(judge.evaluate_many([], executor="ray"))


def test_nothing_on_the_evaluation_path_imports_ray():
    code = ("import sys, kbench, kbench.cli, kbench.judge, kbench.runs.runner; "
            "kbench.judge.make_executor('local', ['cpu']); assert 'ray' not in sys.modules, 'ray imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
