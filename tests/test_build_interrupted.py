"""Builds that survive interruption (issue 59), and evaluations of one source that share no
writable state (issue 57).

Ctrl-C during a ``load_inline`` build left torch's ``lock`` file in the solution's build cache,
and every later evaluation of the same source waited on it until its time limit (``timeout``, the
demo's own correct swish). A sandboxed worker now builds in a folder of its own, made the cache
whole only when its build is whole; an unsandboxed one holds a lease on the cache, and a lock
found where nobody holds one is stale and cleared (kbench.judge.builds.cache).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES

import kbench
from kbench.judge.builds import cache as build_cache

SRC = Path(kbench.__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A build cache of the test's own (every source cold)."""
    root = tmp_path / "cache"
    monkeypatch.setenv("KBENCH_CACHE", str(root))
    return root


def _built(folder: Path, lock: bool = False) -> Path:
    extension = folder / "torch_extensions" / "ext"
    extension.mkdir(parents=True)
    (extension / "ext.so").write_text("built")
    if lock:
        (extension / "lock").write_text("")
    return folder


def test_a_worker_builds_in_a_copy_of_its_own_that_becomes_the_cache_only_whole(cache):
    solution_cache = build_cache.candidate_build_dir("a" * 64)
    private = build_cache.private_build_dir(solution_cache)
    assert private.parent == solution_cache.parent and not any(private.iterdir())
    _built(private, lock=True)  # a build interrupted in it: never the cache
    build_cache.publish_build(private, solution_cache)
    assert not solution_cache.exists() and not private.exists()
    whole = _built(build_cache.private_build_dir(solution_cache))
    build_cache.publish_build(whole, solution_cache)
    assert (solution_cache / "torch_extensions" / "ext" / "ext.so").read_text() == "built"
    copy = build_cache.private_build_dir(solution_cache)  # the next worker's: a copy; the cache stays as it was
    (copy / "planted").write_text("seen by the next evaluation?")
    build_cache.publish_build(copy, solution_cache)
    assert not (solution_cache / "planted").exists() and not copy.exists()


def test_a_lock_left_in_the_cache_is_cleared_unless_an_unsandboxed_build_holds_it(cache):
    solution_cache = _built(build_cache.candidate_build_dir("b" * 64), lock=True)  # as a killed build left it
    lease = build_cache.shared_build_lease(solution_cache)  # an unsandboxed worker: nobody else there, so stale
    assert not (solution_cache / "torch_extensions" / "ext" / "lock").exists()
    (solution_cache / "torch_extensions" / "ext" / "lock").write_text("")  # its own build, live
    copy = build_cache.private_build_dir(solution_cache)
    assert not any(copy.iterdir())  # not copied half-made
    assert (solution_cache / "torch_extensions" / "ext" / "lock").exists()
    assert not build_cache.clear_stale_locks(solution_cache)
    lease.close()  # its worker gone: what it left is stale
    assert build_cache.clear_stale_locks(solution_cache)
    assert not (solution_cache / "torch_extensions" / "ext" / "lock").exists()


def test_the_folders_of_a_judge_that_died_are_removed(cache):
    solution_cache = build_cache.candidate_build_dir("c" * 64)
    solution_cache.parent.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    abandoned = solution_cache.parent / f"{build_cache.PRIVATE_PREFIX}{dead.pid}-0123"
    _built(abandoned, lock=True)
    build_cache._swept.discard(solution_cache.parent)
    build_cache.private_build_dir(solution_cache)
    assert not abandoned.exists()


COUNTER = '''
import os
import torch.nn as nn

_path = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "..", "count")
_seen = int(open(_path).read()) if os.path.exists(_path) else 0
os.makedirs(os.path.dirname(_path), exist_ok=True)
open(_path, "w").write(str(_seen + 1))


class ModelNew(nn.Module):
    def forward(self, x):
        raise RuntimeError(f"evaluations seen before: {_seen}")
'''


def test_evaluations_of_one_source_share_no_writable_state(cache, tmp_path):
    """A candidate that counts its evaluations in its build cache: the first one's whole cache is
    kept, and every evaluation after sees that, never what another wrote since; one in a fresh
    build cache (a confirmation's) sees nothing."""
    solution = tmp_path / "counter.py"
    solution.write_text(COUNTER)

    def seen() -> str:
        verdict = kbench.evaluate("level1/relu", solution, "cpu", measure_time=False, trials=1)
        assert verdict.status == "runtime_error", verdict.reason
        return verdict.reason.split("evaluations seen before: ")[1][0]

    assert [seen(), seen(), seen()] == ["0", "1", "1"]  # writable and shared, it counted 0, 1, 2
    with build_cache.fresh_builds():
        assert seen() == "0"


SLOW_BUILD = 600


def _cold_build_started(root: Path, deadline: float) -> None:
    """Until torch holds its build lock in a folder under ``root`` (the build is under way)."""
    while time.monotonic() < deadline:
        if any(root.rglob("torch_extensions/*/lock")):
            return
        time.sleep(0.2)
    raise AssertionError("the build never started")


def _interrupted(cache_root: Path, signum: int, sandbox: bool) -> None:
    """``kbench eval`` of the demo's swish started, and interrupted with ``signum`` mid-build
    (SIGINT to its process group: what Ctrl-C in a terminal sends)."""
    command = [sys.executable, "-m", "kbench", "eval", str(EXAMPLES / "swish.py"), "--problem", "level1/swish",
               "--device", "cpu", "--no-timing", "--trials", "1", *([] if sandbox else ["--no-sandbox"])]
    env = {**os.environ, "KBENCH_CACHE": str(cache_root), "PYTHONPATH": str(SRC)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        _cold_build_started(cache_root, time.monotonic() + SLOW_BUILD)
        time.sleep(2)  # the compiler running
        os.killpg(process.pid, signum)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
@pytest.mark.parametrize("signum, sandbox", [(signal.SIGINT, True), (signal.SIGKILL, True),
                                             (signal.SIGKILL, False)],
                         ids=["sigint", "sigkill", "sigkill-unsandboxed"])
def test_a_build_interrupted_at_any_point_leaves_the_next_evaluation_correct(cache, signum, sandbox):
    """Issue 59: one Ctrl-C, then three ``timeout``s of the demo's own swish. Interrupted
    mid-build, by SIGINT or SIGKILL, sandboxed or not, the same source is judged again: correct."""
    _interrupted(cache, signum, sandbox)
    started = time.monotonic()
    verdict = kbench.evaluate("level1/swish", EXAMPLES / "swish.py", "cpu", measure_time=False, trials=1,
                              sandbox=sandbox, timeout=SLOW_BUILD)
    assert verdict.status == "correct", verdict.reason
    assert time.monotonic() - started < SLOW_BUILD
    solution_cache = build_cache.candidate_build_dir(kbench.Solution.from_file(EXAMPLES / "swish.py").sha256)
    assert not list(solution_cache.rglob("lock"))
