"""The judge's background work (kbench.judge.processes.background) stops while anything is timed.

On the H200 three honest solutions were rejected by ``trusted-clock`` while 14 nvcc
builds ran beside the measurements (issue 28): a build ahead, the compilers it
started included, must be stopped while an evaluation times its calls, and go on
(and finish) after.
"""

import threading
import time

import psutil
from conftest import PROBLEM, SOLUTIONS

import kbench
from kbench.judge import evaluation as evaluation_module
from kbench.judge.processes.background import BACKGROUND, Background
from kbench.judge.builds.ahead import build
from kbench.judge.processes.devices import worker_env
from kbench.judge.processes.process import Worker
from kbench.judge.trusted.reference import ReferenceSide
from kbench.judge.protocol.timing import TimingSettings

# A build whose import burns CPU in itself and in a child it started, until told to stop.
BURNING_BUILD = '''
import os, subprocess, sys
STOP = {stop!r}
BURN = "import os\\nwhile not os.path.exists(%r):\\n    pass\\n" % STOP
_child = subprocess.Popen([sys.executable, "-c", BURN])
while not os.path.exists(STOP):
    pass
_child.wait()

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x
'''


def _tree(worker: Worker) -> list[psutil.Process]:
    root = psutil.Process(worker.process.pid)
    return [root, *root.children(recursive=True)]


def _statuses(workers) -> set[str]:
    return {p.status() for worker in workers for p in _tree(worker)}


def _wait_for(condition, what: str, seconds: float = 120.0) -> None:
    give_up = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < give_up, f"never happened: {what}"
        time.sleep(0.05)


def test_a_build_ahead_is_stopped_while_an_evaluation_times_and_finishes_after(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    stop = tmp_path / "stop"
    solution = tmp_path / "burning.py"
    solution.write_text(BURNING_BUILD.format(stop=str(stop)))
    built: list[dict] = []
    builder = threading.Thread(target=lambda: built.append(build(solution, "cpu", timeout=600, sandbox=False)))
    builder.start()
    try:
        _wait_for(lambda: any(len(_tree(w)) >= 2 for w in BACKGROUND.workers()), "the build's child burning")
        [builder_worker] = BACKGROUND.workers()
        seen: dict[str, list[tuple[int, set[str]]]] = {"candidate": [], "baseline": []}

        def look(phase: str) -> None:
            tree = _tree(builder_worker)
            seen[phase].append((len(tree), {p.status() for p in tree}))

        original_round = evaluation_module._Evaluation._candidate_round
        original_quiet = ReferenceSide.quiet_gpu_findings  # the start of every baseline round

        def candidate_round(self, *args):
            look("candidate")
            return original_round(self, *args)

        def quiet_gpu_findings(self, *args):
            look("baseline")
            return original_quiet(self, *args)

        monkeypatch.setattr(evaluation_module._Evaluation, "_candidate_round", candidate_round)
        monkeypatch.setattr(ReferenceSide, "quiet_gpu_findings", quiet_gpu_findings)
        quick = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=0.5,
                               rounds=2)
        verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu", trials=1, timing=quick)
        assert verdict.status == "correct", verdict.reason
        for phase in ("candidate", "baseline"):
            assert [count >= 2 for count, _ in seen[phase]] == [True, True], seen
            assert [states for _, states in seen[phase]] == [{psutil.STATUS_STOPPED}] * 2, seen
        _wait_for(lambda: psutil.STATUS_STOPPED not in _statuses([builder_worker]), "the build going on")
    finally:
        stop.write_text("")
        builder.join(timeout=300)
    assert built and built[0]["ok"], built
    assert BACKGROUND.workers() == [] and not BACKGROUND.paused


def test_a_builds_time_limit_does_not_count_the_time_it_was_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    solution = tmp_path / "plain.py"
    solution.write_text("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    limit, stopped_for = 15.0, 20.0  # stopped for longer than its whole limit, from its start
    built: list[dict] = []
    BACKGROUND.pause()
    try:
        builder = threading.Thread(target=lambda: built.append(build(solution, "cpu", timeout=limit, sandbox=False)))
        builder.start()
        _wait_for(lambda: BACKGROUND.workers(), "the build's worker")
        [worker] = BACKGROUND.workers()
        assert _statuses([worker]) == {psutil.STATUS_STOPPED}  # registered while something was timed: stopped
        time.sleep(stopped_for)
    finally:
        BACKGROUND.resume()
    builder.join(timeout=300)
    assert built and built[0]["ok"], built
    assert built[0]["seconds"] > limit


def test_the_background_runs_again_only_once_the_last_timing_ends_and_when_taken_out():
    background = Background()
    with Worker(worker_env("cpu")) as first, Worker(worker_env("cpu")) as second:
        held = background.add(first)
        background.pause()  # two evaluations timing at once, on two devices
        background.pause()
        assert _statuses([first]) == {psutil.STATUS_STOPPED}
        background.add(second)  # started while they time: stopped at once
        assert _statuses([second]) == {psutil.STATUS_STOPPED}
        background.resume()
        assert _statuses([first, second]) == {psutil.STATUS_STOPPED}  # the other one still times
        background.remove(second)  # a spare taken by an evaluation: its own now
        assert psutil.STATUS_STOPPED not in _statuses([second])
        background.resume()
        assert psutil.STATUS_STOPPED not in _statuses([first])
        assert held.paused_seconds() > 0 and held.since is None
        background.resume()  # one resume too many changes nothing
        assert not background.paused
        background.remove(first)
    assert background.workers() == []
