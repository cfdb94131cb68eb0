"""Workers started ahead of need (kbench.judge.processes.spares): what a batch of evaluations uses."""

import queue
from pathlib import Path

import psutil
from conftest import PROBLEM, SOLUTIONS

import kbench
from kbench.judge import LocalExecutor
from kbench.judge import evaluation as evaluation_module
from kbench.judge import executor as executor_module
from kbench.judge.executor import next_result
from kbench.judge.processes import spares as spares_module
from kbench.judge.builds.cache import candidate_build_dir
from kbench.judge.processes.sandbox import find_sandbox
from kbench.judge.processes.spares import Spares
from kbench.judge.protocol.timing import TimingSettings


def test_a_spare_pair_judges_and_a_build_made_in_it_comes_back_warm(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path))
    spares = Spares("cpu", find_sandbox(), depth=1)
    try:
        verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu", trials=1,
                                  measure_time=False, spares=spares)
        assert verdict.status == "correct", verdict.reason
        taken = spares.take("a" * 64, None)
        built = Path("torch_extensions") / "relu_ext" / "relu_ext.so"
        (taken.build / built).parent.mkdir(parents=True)
        (taken.build / built).write_text("a binary")  # as if the candidate had built its extension
        taken.finish()
        assert (candidate_build_dir("a" * 64) / built).read_text() == "a binary"  # its own cache now
        again = spares.take("a" * 64, None)
        assert (again.build / built).read_text() == "a binary"  # the next evaluation of it starts warm
        again.finish()
        other = spares.take("b" * 64, None)
        assert not (other.build / built).exists()  # no other solution sees it
        other.finish()
    finally:
        spares.close()
    assert not [p for p in (tmp_path / "candidates").iterdir() if p.name.startswith("spare-")]


def test_a_solutions_cache_never_writes_over_what_the_spare_built_as_it_started(tmp_path, monkeypatch):
    """A spare's candidate worker may build a kernel in its build folder as it starts, and have its
    launcher loaded from there: the solution's cache, copied in when the spare is taken, adds
    what is missing and leaves those files as they are (written over, a loaded library crashed
    every later worker pair on the H200)."""
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path))
    cache = candidate_build_dir("c" * 64)
    for name in ("triton/key/launcher.so", "torch_extensions/ext/ext.so"):
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).write_text("from the solution's cache")
    spares = Spares("cpu", None, depth=1)
    try:
        spares.prepare()
        loaded = spares._ready[0].build / "triton" / "key" / "launcher.so"
        loaded.parent.mkdir(parents=True)
        loaded.write_text("built by the spare")
        inode = loaded.stat().st_ino
        taken = spares.take("c" * 64, None)
        assert loaded.read_text() == "built by the spare" and loaded.stat().st_ino == inode
        assert (taken.build / "torch_extensions/ext/ext.so").read_text() == "from the solution's cache"
        assert not [p for p in taken.build.rglob("*") if p.name.endswith(".part")]
        taken.finish()
    finally:
        spares.close()


def test_a_batch_takes_each_evaluations_workers_from_spares_when_asked(monkeypatch):
    taken = []
    original = Spares.take

    def take(self, solution_sha256, memory_limit_bytes):
        taken.append(solution_sha256)
        return original(self, solution_sha256, memory_limit_bytes)

    monkeypatch.setattr(spares_module.Spares, "take", take)
    pairs = [(PROBLEM, SOLUTIONS / "honest_triton.py"), (PROBLEM, SOLUTIONS / "syntax_error.py")]
    verdicts = dict(kbench.evaluate_many(pairs, executor=LocalExecutor(["cpu"], ahead=True), measure_time=False,
                                         trials=1))
    assert verdicts[0].status == "correct" and verdicts[1].status == "compile_error"
    assert len(taken) == 2
    dict(kbench.evaluate_many(pairs[1:], ["cpu"], measure_time=False, trials=1))
    assert len(taken) == 2  # not by default


def test_spares_are_stopped_while_anything_is_timed_and_go_on_after(monkeypatch):
    states = []
    original = evaluation_module._Evaluation._candidate_round

    def candidate_round(self, *args):
        states.append({psutil.Process(w.process.pid).status() for w in self.spares.workers()})
        return original(self, *args)

    monkeypatch.setattr(evaluation_module._Evaluation, "_candidate_round", candidate_round)
    spares = Spares("cpu", find_sandbox())
    try:
        quick = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=0.5,
                               rounds=2)
        verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu", trials=1, timing=quick,
                                  spares=spares)
        assert verdict.status == "correct", verdict.reason
        assert states == [{psutil.STATUS_STOPPED}] * 2
        assert len(spares.workers()) == 6  # two pairs ahead, each with its eager worker
        assert psutil.STATUS_STOPPED not in {psutil.Process(w.process.pid).status() for w in spares.workers()}
    finally:
        spares.close()


def test_a_device_thread_starts_its_spares_before_its_first_job_comes():
    """A run whose first solutions are still building: the first evaluation finds its workers started."""
    seen = []

    def run(job, device):
        seen.append(len(spares_module.current(device, find_sandbox()).workers()))
        return job

    results = queue.Queue()
    threads = LocalExecutor(["cpu"], ahead=True).threads(run, results)
    try:
        threads.submit("the first job")
        assert threads.received(next_result(results)[1]) == "the first job"
    finally:
        threads.close()
    assert seen == [3 * spares_module.PAIRS_AHEAD]  # reference, candidate and eager workers


def test_without_a_sandbox_no_spares_are_kept_ahead(monkeypatch):
    """Spares are sandboxed: a batch judged without the sandbox never takes them, so none start."""
    made = []
    monkeypatch.setattr(executor_module, "LocalExecutor", lambda devices, build_jobs, ahead: made.append(ahead))
    executor_module.evaluate_many([(PROBLEM, SOLUTIONS / "honest_triton.py")], ["cpu"], sandbox=False)
    executor_module.evaluate_many([(PROBLEM, SOLUTIONS / "honest_triton.py")], ["cpu"])
    assert made == [False, None]  # None: the executor's default, ahead on GPUs
