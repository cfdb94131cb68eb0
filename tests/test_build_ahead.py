"""Builds ahead keep a run's devices busy (kbench.judge.executor, kbench.judge.builds.ahead).

On the H200 a run with ``--build-jobs 14`` started 14 cold nvcc builds at once; they
finished together after 137 s (55 s each alone), and the GPU sat idle until then,
although Triton solutions need no build and could have been judged meanwhile. These
tests drive ``LocalExecutor.map`` with fake builds and jobs that wait on events, so
the order things happen in is the test's own, never a race with the clock.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest
from conftest import PROBLEM
from honest.corpus import CORPUS, HERE

import kbench
from kbench.judge.builds import ahead as builds_module
from kbench.judge import executor as executor_module
from kbench.judge.builds.ahead import build_slots, needs_build
from kbench.judge.executor import LocalExecutor
from kbench.suite.examples import __path__ as examples_path

WAIT = 60.0  # seconds a step may take before the test calls it stuck


class Scripted:
    """Fake ``prebuild`` and ``run``: each build waits until the test releases it, and the
    log says, in order, what started and ended (``build+ a``, ``build- a``, ``run a``)."""

    def __init__(self, fail_build: str | None = None, fail_run: str | None = None, fails_once_started: str = ""):
        self.release: dict[str, threading.Event] = {}
        self.started: dict[str, threading.Event] = {}
        self.log: list[str] = []
        self.lock = threading.Lock()
        self.building = 0
        self.most_building = 0
        self.fail_build, self.fail_run, self.fails_once_started = fail_build, fail_run, fails_once_started

    def _event(self, table: dict[str, threading.Event], item: str) -> threading.Event:
        with self.lock:
            return table.setdefault(item, threading.Event())

    def prebuild(self, item: str, device: str) -> None:
        with self.lock:
            self.log.append(f"build+ {item}")
            self.building += 1
            self.most_building = max(self.most_building, self.building)
        self._event(self.started, item).set()
        released = self._event(self.release, item).wait(WAIT)
        with self.lock:
            self.building -= 1
            self.log.append(f"build- {item}")
        assert released, f"the build of {item} was never released"
        if item == self.fail_build:
            raise RuntimeError(f"the build of {item} broke")

    def run(self, item: str, device: str) -> str:
        with self.lock:
            self.log.append(f"run {item}")
        if item == self.fail_run:
            if self.fails_once_started:  # a build in progress when the job's error reaches the caller
                self.wait_started(self.fails_once_started)
            raise ValueError(f"job {item} failed")
        return item.upper()

    def finish(self, item: str) -> None:
        self._event(self.release, item).set()

    def wait_started(self, item: str) -> None:
        assert self._event(self.started, item).wait(WAIT), f"the build of {item} never started"


class Consumer:
    """Takes a map's results in a thread of its own, so that the test can wait for builds to
    start before the first result (a generator does nothing until it is first asked)."""

    def __init__(self, results):
        self.queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._take, args=(results,), daemon=True).start()

    def _take(self, results) -> None:
        try:
            for result in results:
                self.queue.put(result)
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread by next()
            self.queue.put(exc)

    def next(self):
        result = self.queue.get(timeout=WAIT)
        if isinstance(result, BaseException):
            raise result
        return result


def _cuda(item: str) -> bool:
    return item.startswith("cuda")


@pytest.fixture
def cpus(monkeypatch):
    """Pretend the machine has ``n`` CPUs (build_slots reads them)."""
    def pretend(n: int) -> None:
        monkeypatch.setattr(builds_module, "available_cpus", lambda: n)
    return pretend


def test_a_solution_that_needs_no_build_is_judged_while_an_earlier_one_builds(cpus):
    cpus(16)
    script = Scripted()
    results = LocalExecutor(["cpu"], build_jobs=4).map(["cuda_a", "triton_b", "plain_c"], script.run,
                                                        script.prebuild, _cuda)
    assert [next(results), next(results)] == [(1, "TRITON_B"), (2, "PLAIN_C")]
    script.finish("cuda_a")
    assert list(results) == [(0, "CUDA_A")]
    assert script.log.index("build- cuda_a") < script.log.index("run cuda_a")
    assert [entry for entry in script.log if entry.startswith("build+")] == ["build+ cuda_a"]  # only it is built


def test_built_solutions_are_judged_in_the_order_their_builds_end(cpus):
    cpus(16)
    script = Scripted()
    items = ["cuda_a", "cuda_b", "cuda_c"]
    results = LocalExecutor(["cpu"], build_jobs=3).map(items, script.run, script.prebuild, _cuda)
    order = []
    for item in ("cuda_c", "cuda_a", "cuda_b"):
        script.finish(item)  # the others still building
        order.append(next(results))
    assert order == [(2, "CUDA_C"), (0, "CUDA_A"), (1, "CUDA_B")]
    assert [entry for entry in script.log if entry.startswith("run")] == ["run cuda_c", "run cuda_a", "run cuda_b"]


def test_until_the_first_build_ends_no_more_run_at_once_than_the_cpus_allow_then_more_beside_judging(cpus):
    cpus(8)  # 8 CPUs, 2 kept for the device's evaluation: 3 builds at full speed, 4 beside judging
    script = Scripted()
    items = [f"cuda_{i}" for i in range(7)]
    executor = LocalExecutor(["cpu"], build_jobs=10)
    assert (executor.describe()["build_slots"], executor.describe()["build_slots_judging"]) == (3, 4)
    results = Consumer(executor.map(items, script.run, script.prebuild, _cuda))
    for item in items[:3]:
        script.wait_started(item)
    assert script.building == 3  # the first three in the items' order, none of the others
    assert sorted(entry for entry in script.log if entry.startswith("build+")) == [f"build+ {i}" for i in items[:3]]
    script.finish(items[0])
    assert results.next() == (0, "CUDA_0")
    for item in items[3:5]:  # the first ended: its slot and one more
        script.wait_started(item)
    assert sorted(entry for entry in script.log if entry.startswith("build+")) == [f"build+ {i}" for i in items[:5]]
    for item in items[1:]:
        script.wait_started(item)
        script.finish(item)
        assert results.next() == (items.index(item), item.upper())
    assert script.most_building == 4


def test_a_caller_that_stops_early_starts_no_build_waiting_for_its_turn(cpus):
    cpus(16)
    script = Scripted()
    results = LocalExecutor(["cpu"], build_jobs=1).map(["cuda_a", "cuda_b", "triton_c"], script.run,
                                                        script.prebuild, _cuda)
    assert next(results) == (2, "TRITON_C")
    results.close()
    script.finish("cuda_a")
    _wait_for_builds(script, "cuda_a")
    assert "build+ cuda_b" not in script.log and "run cuda_a" not in script.log


def test_the_users_build_jobs_bound_the_builds_below_what_the_cpus_allow(cpus):
    cpus(64)
    script = Scripted()
    items = [f"cuda_{i}" for i in range(4)]
    executor = LocalExecutor(["cpu"], build_jobs=2)
    assert executor.describe()["build_slots"] == 2
    results = Consumer(executor.map(items, script.run, script.prebuild, _cuda))
    for item in items[:2]:
        script.wait_started(item)
    for item in items:
        script.wait_started(item)
        assert script.most_building == 2
        script.finish(item)
        assert results.next() == (items.index(item), item.upper())


def test_a_build_that_raises_still_has_its_solution_judged(cpus):
    cpus(16)
    script = Scripted(fail_build="cuda_a")
    results = LocalExecutor(["cpu"], build_jobs=2).map(["cuda_a", "cuda_b"], script.run, script.prebuild, _cuda)
    script.finish("cuda_a")
    assert next(results) == (0, "CUDA_A")  # its evaluation builds it again and reports what broke
    script.finish("cuda_b")
    assert next(results) == (1, "CUDA_B")


def test_a_jobs_exception_is_raised_in_the_caller_and_a_build_ending_later_starts_no_job(cpus):
    cpus(16)
    script = Scripted(fail_run="triton_b", fails_once_started="cuda_a")
    results = LocalExecutor(["cpu"], build_jobs=2).map(["cuda_a", "triton_b"], script.run, script.prebuild, _cuda)
    with pytest.raises(ValueError, match="job triton_b failed"):
        next(results)
    script.finish("cuda_a")
    _wait_for_builds(script, "cuda_a")
    assert "run cuda_a" not in script.log


def test_a_caller_that_stops_early_drops_the_jobs_whose_builds_end_later(cpus):
    cpus(16)
    script = Scripted()
    results = LocalExecutor(["cpu"], build_jobs=2).map(["cuda_a", "triton_b"], script.run, script.prebuild, _cuda)
    assert next(results) == (1, "TRITON_B")
    script.wait_started("cuda_a")
    results.close()  # Ctrl-C, or a consumer that has what it wants
    script.finish("cuda_a")
    _wait_for_builds(script, "cuda_a")
    assert "run cuda_a" not in script.log


def test_without_build_jobs_every_job_goes_in_order_and_nothing_is_built():
    script = Scripted()
    results = list(LocalExecutor(["cpu"]).map(["cuda_a", "triton_b"], script.run, script.prebuild, _cuda))
    assert results == [(0, "CUDA_A"), (1, "TRITON_B")]
    assert script.log == ["run cuda_a", "run triton_b"]


def _wait_for_builds(script: Scripted, item: str) -> None:
    """Every build thread done (the pool was shut down), so the build of ``item`` ended and its
    done-callback, which hands its job to the devices, has run."""
    for thread in threading.enumerate():
        if thread.name.startswith("kbench-build"):
            thread.join(WAIT)
    assert f"build- {item}" in script.log


def test_build_slots_keep_cores_for_the_devices_and_respect_the_users_bound():
    assert build_slots(0, 1, cpus=16) == 0  # none asked for: each evaluation builds its own
    assert build_slots(14, 1, cpus=16) == 7  # the H200 run of issue 30: 14 asked, 7 fit
    assert build_slots(4, 1, cpus=16) == 4
    assert build_slots(14, 8, cpus=16) == 1  # eight devices take the cores: still one ahead
    assert build_slots(14, 1, cpus=2) == 1
    # beside judging (builds paused while the device times): 10 of the 14 on the H200, as measured
    assert [build_slots(jobs, devices, cpus=16, judging=True) for jobs, devices in ((0, 1), (14, 1), (4, 1), (14, 8))] \
        == [0, 10, 4, 1]


def test_solutions_that_compile_an_extension_need_a_build_and_triton_ones_do_not():
    rows = {row.file: row.language for row in CORPUS}
    assert set(rows.values()) == {"cuda", "cpp", "triton"}  # cpp: C++ for the CPU through load_inline
    wrong = {file: language for file, language in rows.items()
             if needs_build((HERE / file).read_text()) != (language in ("cuda", "cpp"))}
    assert wrong == {}
    examples = {path.name: needs_build(path.read_text()) for path in _examples()}
    assert examples == {"relu.py": False, "softmax.py": False, "swish.py": True}  # Triton, Triton, load_inline


def test_a_build_is_recognised_however_the_builder_is_imported():
    assert needs_build("from torch.utils.cpp_extension import load\n_ext = load(name='x', sources=['x.cu'])\n")
    assert needs_build("import torch.utils.cpp_extension as ce\n")
    assert needs_build("from torch.utils.cpp_extension import load_inline as li\n")
    assert not needs_build("import triton.language as tl\nx = tl.load(p + offs)\ny = torch.load(f)\n")
    assert not needs_build("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                           "        return x.relu()\n")


def _examples() -> list[Path]:
    return sorted(Path(examples_path[0]).glob("*.py"))


def test_a_batch_builds_ahead_with_the_problem_size_and_dtype_its_evaluation_will_judge(monkeypatch):
    """So that a solution compiling in ``ModelNew.__init__`` is built ahead, not on the device."""
    built = []
    monkeypatch.setattr(executor_module, "build", lambda solution, device, **kwargs: built.append(kwargs))
    monkeypatch.setattr(executor_module, "evaluate", lambda problem, solution, device, **options: "judged")
    solution = kbench.Solution(source="from torch.utils.cpp_extension import load_inline\n")
    verdicts = dict(executor_module.evaluate_many([(PROBLEM, solution)], ["cpu"], build_jobs=1, size="small",
                                                  dtype="bfloat16"))
    assert verdicts == {0: "judged"}
    assert [(k["problem"].path, k["size"], k["dtype"]) for k in built] == [(PROBLEM, "small", "bfloat16")]
