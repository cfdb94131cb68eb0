"""A repository's tests, run with pytest in the candidate's sandbox, with a time limit.

The visible tests and the hidden tests are two runs (``run_task_tests``): the hidden run's
tree, build cache and home are its own and deleted once its report is read, so nothing it
wrote reaches the workload or an agent (docs/patches.md, what the judge trusts).

The tests import the patched repository, which is the candidate's code: they
run in the same OS sandbox as every candidate process (kbench.judge.processes.sandbox:
its own mount, PID and network namespaces, a uid of its own as root, writable only its
scratch folder and its build cache, an environment of a few named
variables), in a process group the judge kills at the time limit, with the
judge's host memory limit on the whole tree. pytest writes a JUnit XML report
into the scratch folder, from which the first failing test is named by its
node id (``tests/test_norm.py::test_shapes[2]``). ``KBENCH_DEVICE`` names the judged
device to the tests (``cpu`` or ``cuda:0``): they make their tensors there, so a patch's
GPU code is what its tests run when it is judged on a GPU.

The report is written by a process that runs the patch's code, so a patch set
on forging it could (as it could forge a test's own assertions, or behave only
under pytest): the tests are the gate for honest mistakes. What a forger cannot reach is checked where it
cannot reach it: the static integrity rules read every Python file the patch
changed before anything runs (kbench.repo.integrity), and the task's edge
cases and the workload's outputs are compared with the base revision's in
another process (kbench.judge, kbench.repo.patch_judge). pytest's plugins are
not loaded automatically (only what the repository's own configuration
names), so a run is the same wherever
kbench is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field, replace
from pathlib import Path

import psutil

from kbench.judge.builds.cache import candidate_build_dir

from kbench.judge.processes.devices import gpu_turn, worker_env
from kbench.judge.processes.process import OutputTail, default_memory_limit
from kbench.judge.processes.sandbox import (
    BUILD_MOUNT, Sandbox, SandboxIdentity, candidate_env, give_to_candidate, limit_processes,
)
from kbench.repo.task import Task, TaskError

REPORT_NAME = "junit.xml"
HIDDEN_BUILD = "build"  # the hidden run's copy of the patch's build cache, in its folder
POLL_SECONDS = 0.25
MESSAGE_CHARS = 2000
RUN_PYTEST = "import os, sys, pytest; os.chdir(sys.argv[1]); sys.exit(pytest.main(sys.argv[2:]))"
LOCATION = re.compile(r"(.+?):(\d+): ", re.DOTALL)  # where pytest says a skip was called


@dataclass(frozen=True)
class TestOutcome:
    """One test as pytest reported it: ``passed``, ``failed``, ``error`` or ``skipped``."""

    id: str
    outcome: str
    message: str = ""


@dataclass
class TestsRun:
    """A run of some of a repository's tests.

    ``status``: ``passed`` (every test passed or was skipped, at least one ran),
    ``failed`` (a test failed or errored), ``collection_error`` (a test module
    could not be imported: the repository does not import), ``no_tests``,
    ``timeout``, ``crashed`` (pytest ended without a report, or past the memory limit).
    """

    status: str
    outcomes: list[TestOutcome] = field(default_factory=list)
    detail: str = ""
    output: str = ""
    output_bytes: int = 0
    seconds: float = 0.0
    hidden_output: str = ""  # the hidden tests' run's: never shown to an agent (kbench.agents.repo_prompts)
    hidden_ran: bool = False  # the hidden tests ran (after the visible ones passed): a failure is theirs

    def failures(self) -> list[TestOutcome]:
        return [o for o in self.outcomes if o.outcome in ("failed", "error")]

    def summary(self) -> str:
        """One line: what ran and, where a test failed, which and why."""
        counts = {kind: sum(o.outcome == kind for o in self.outcomes) for kind in ("passed", "failed", "error")}
        ran = f"{counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors"
        failed = self.failures()
        if failed:
            first = failed[0]
            said = _last_line(first.message) if first.id.endswith("::<collection>") else _first_line(first.message)
            return f"{first.id} {first.outcome}: {said} ({ran})"
        return f"{self.detail} ({ran})" if self.detail else ran


def run_task_tests(task: Task, tree: Path, scratch: Path, device: str, *, sandbox: Sandbox | None, build_key: str,
                   hidden: bool = True) -> TestsRun:
    """The task's visible tests, then (with ``hidden``, once they pass) its hidden tests, each run on a
    copy of the checkout at ``tree`` of its own, in ``scratch``, on the device's turn, the two within the
    task's time limit together.

    The two runs share nothing the hidden one could leave behind (docs/patches.md, what the judge trusts):
    the visible run has no hidden file in its tree and builds into the patch's build cache, which the
    workload's candidate uses next (``build_key``); the hidden run has the hidden files placed in its own
    copy and builds into a copy of that cache, and its folder (tree, cache, report, home) is deleted as
    soon as its report is read, so nothing the patch wrote while the hidden tests ran reaches the
    workload, a later evaluation or an agent. Its output is kept apart (``TestsRun.hidden_output``)."""
    names = list(task.visible_tests)
    placed = task.hidden_files() if hidden else []
    if not names and not placed:  # pytest given no path would run every test it finds
        return TestsRun("passed", detail="no tests to run (the task's are all hidden)")
    build = candidate_build_dir(build_key)
    build.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with gpu_turn(device):
        visible = None
        if names:
            copy = _copy(tree, scratch / "visible")
            visible = run_tests(copy, names, device, timeout=task.tests_timeout, sandbox=sandbox, build_key=build_key,
                                scratch=scratch / "visible", build=build)
            if visible.status != "passed" or not placed:
                return visible
        where = scratch / "hidden"
        try:
            copy = _copy(tree, where)
            for source, name in placed:
                if (copy / name).exists() or (copy / name).is_symlink():
                    raise TaskError(f"task file {task.path}: hidden test {name} would replace a file of the repository")
                (copy / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy / name)
            own_build = where / HIDDEN_BUILD
            shutil.copytree(build, own_build, symlinks=True)
            left = max(task.tests_timeout - (time.monotonic() - started), 1.0)
            run = run_tests(copy, [name for _, name in placed], device, timeout=left, sandbox=sandbox,
                            build_key=build_key, scratch=where, build=own_build)
        finally:
            shutil.rmtree(where, ignore_errors=True)
    return _joined(visible, run)


def _copy(tree: Path, scratch: Path) -> Path:
    scratch.mkdir(parents=True, exist_ok=True)
    copy = scratch / "repo"
    shutil.copytree(tree, copy, symlinks=True)
    return copy


def _joined(visible: TestsRun | None, hidden: TestsRun) -> TestsRun:
    """The two runs as one: the hidden run's status (the visible one passed), every outcome, the visible
    run's output, the hidden run's apart."""
    if visible is None:
        return replace(hidden, output="", output_bytes=0, hidden_output=hidden.output, hidden_ran=True)
    return TestsRun(hidden.status, [*visible.outcomes, *hidden.outcomes], hidden.detail, visible.output,
                    visible.output_bytes, visible.seconds + hidden.seconds, hidden.output, True)


def run_tests(tree: Path, tests: list[str], device: str, *, timeout: float, sandbox: Sandbox | None,
              build_key: str, scratch: Path, build: Path | None = None) -> TestsRun:
    """Run ``tests`` (paths or node ids relative to ``tree``) with pytest, ``tree`` first on the
    import path and as pytest's root; ``scratch`` (which holds ``tree``) is the only place the
    run can write, besides its build cache (``build``; by default the one keyed by ``build_key``)."""
    report = scratch / REPORT_NAME
    build = build or candidate_build_dir(build_key)
    build.mkdir(parents=True, exist_ok=True)
    env = {**candidate_env(dict(os.environ)), **worker_env(device, Path(BUILD_MOUNT) if sandbox else build),
           **_visible_device(device), "KBENCH_DEVICE": device_in_tests(device), "PYTHONPATH": str(tree),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(scratch)}
    env.pop("KBENCH_WORKER_DEVICE", None)
    # pytest run from the repository's root, so that what it prints names the repository's paths.
    argv = [sys.executable, "-c", RUN_PYTEST, str(tree), "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            f"--junitxml={report}", f"--rootdir={tree}", *tests]
    # As root, the run is a uid of its own (no test run or candidate can use up another's processes),
    # given back once the run's PID namespace, and so everything it started, is gone.
    identity = SandboxIdentity() if sandbox is not None else None
    try:
        if sandbox is not None:
            give_to_candidate(scratch, build, uid=identity.uid)
            argv = sandbox.wrap(argv, scratch=scratch, build=build, env=env, filter_env=False,
                                hostname="kbench-tests", uid=identity.uid)
        started = time.monotonic()
        process = subprocess.Popen(argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=limit_processes if sandbox else None)
        tail = OutputTail()
        reader = threading.Thread(target=_drain, args=(process, tail), daemon=True)
        reader.start()
        ended = _wait(process, started + timeout, default_memory_limit())
        reader.join(timeout=2)
    finally:
        if identity is not None:
            identity.release()
    if ended and ended[0] == "timeout":
        ended = ("timeout", f"the tests did not finish within {timeout:g} s")
    run = TestsRun("", output=_relative(tail.text(), tree), output_bytes=tail.total_bytes,
                   seconds=time.monotonic() - started)
    if ended:
        run.status, run.detail = ended
        return run
    run.outcomes = read_report(report, tree)
    if not report.is_file():
        run.status, run.detail = "crashed", f"pytest ended with status {process.returncode} and no report"
    elif any(o.outcome == "error" and o.id.endswith("::<collection>") for o in run.outcomes):
        run.status = "collection_error"
    elif run.failures():
        run.status = "failed"
    elif not any(o.outcome == "passed" for o in run.outcomes):
        run.status, run.detail = "no_tests", f"no test ran (pytest status {process.returncode})"
    elif process.returncode != 0:  # every test passed, yet pytest failed: its own error, or an exit
        run.status, run.detail = "crashed", f"pytest ended with status {process.returncode}"
    else:
        run.status = "passed"
    return run


def read_report(report: Path, tree: Path) -> list[TestOutcome]:
    """The tests in pytest's JUnit XML report (xunit1: each test case names its file)."""
    try:
        root = ElementTree.parse(report).getroot()
    except (OSError, ElementTree.ParseError):
        return []
    outcomes = []
    for case in root.iter("testcase"):
        outcome, message, collection = "passed", "", False
        for kind in ("failure", "error", "skipped"):
            found = case.find(kind)
            if found is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
                message = found.get("message") or ""
                collection = kind == "error" and message == "collection failure" and not case.get("classname")
                if collection or not message:  # what went wrong is in the traceback's "E" lines
                    errors = [line[1:].strip() for line in (found.text or "").splitlines() if line.startswith("E ")]
                    message = "\n".join(line for line in errors if line) or message or (found.text or "")
                if kind == "skipped" and not _skipped_by_the_test(found.text or "", tree, case.get("file") or ""):
                    outcome, message = "failed", f"skipped by code outside the tests: {(found.text or '').strip()}"
                break
        outcomes.append(TestOutcome(_node_id(case, collection), outcome, _relative(message, tree)[-MESSAGE_CHARS:]))
    return outcomes


def _skipped_by_the_test(text: str, tree: Path, file: str) -> bool:
    """Whether a skip was called by the tests themselves: in the test's folder (its own file,
    a helper beside it) or a ``conftest.py``, where pytest reports it (``path:line: reason``).
    A skip raised from the repository's code (``pytest.skip`` in a patched function) hides
    a test from the judge: it counts as a failure."""
    match = LOCATION.match(text.strip())
    if match is None or not file:
        return False
    where = Path(match.group(1))
    where = where if where.is_absolute() else tree / where
    folder = (tree / file).parent.resolve()
    return where.name == "conftest.py" or where.resolve().is_relative_to(folder)


def _node_id(case: ElementTree.Element, collection: bool) -> str:
    """A test case's pytest node id, from its file, class name and name; a test module that
    could not be imported is ``<file>::<collection>``."""
    file, classname, name = case.get("file") or "", case.get("classname") or "", case.get("name") or ""
    if collection:
        return f"{file or name}::<collection>"
    module = file.removesuffix(".py").replace("/", ".")
    inner = classname[len(module) + 1:].replace(".", "::") if classname.startswith(module + ".") else ""
    return "::".join(filter(None, [file, inner, name])) or "?"


def device_in_tests(device: str) -> str:
    """The judged device as the tests see it, for ``KBENCH_DEVICE``: ``cpu``, or ``cuda:0`` (the one
    GPU ``_visible_device`` leaves them). A task's tests make their tensors there: tests on CPU
    tensors would run a patch's CPU fallback on a GPU, never the code being judged."""
    return "cuda:0" if device.startswith("cuda") else device


def _visible_device(device: str) -> dict[str, str]:
    """The one GPU the tests may use, as CUDA numbers it for them (cuda:N -> device 0)."""
    if not device.startswith("cuda"):
        return {}
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return {"CUDA_VISIBLE_DEVICES": visible[index] if index < len(visible) else str(index)}


def _drain(process: subprocess.Popen, tail: OutputTail) -> None:
    try:
        while chunk := process.stdout.read1(65536):
            tail.feed(chunk)
    except (OSError, ValueError):
        pass


def _wait(process: subprocess.Popen, deadline: float, memory_limit: int) -> tuple[str, str] | None:
    """Wait for the run to end; (status, detail) if it had to be ended first."""
    ended = None
    while process.poll() is None:
        if time.monotonic() > deadline:
            ended = ("timeout", "the tests did not finish within the time limit")
        elif _rss(process.pid) > memory_limit:
            ended = ("crashed", f"the tests passed the host memory limit ({memory_limit / 2**30:.1f} GiB)")
        if ended:
            break
        time.sleep(POLL_SECONDS)
    if ended or process.poll() is None:
        _kill(process)
    return ended


def _rss(pid: int) -> int:
    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
    except psutil.Error:
        return 0


def _kill(process: subprocess.Popen) -> None:
    try:
        tree = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        tree = []
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for child in tree:
        try:
            child.kill()
        except psutil.Error:
            pass
    process.wait()


def _relative(text: str, tree: Path) -> str:
    """Paths in the run's private copy, as the repository's own (``tinyops/norm.py``)."""
    return text.replace(f"{tree}/", "")


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:300]


def _last_line(text: str) -> str:
    line = text.strip().splitlines()[-1] if text.strip() else ""
    return line[:300]
