"""The repository track's judge (kbench.repo): task files, checkouts, patch paths, tests, the workload.

One fixture repository (tests/repo_fixture.py: an RMSNorm that normalises one
row at a time, its tests, a hidden test, a workload, and patches made with
git diff) serves every test. Most verdicts here are reached before anything
of the patch runs (paths, integrity rules); the few that run its tests or
its workload spawn sandboxed processes and are marked slow.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from repo_fixture import git, make_task
from typer.testing import CliRunner

from kbench.cli import app
from kbench.cli.tasks import print_patch_verdict
from kbench.judge.processes.sandbox import UID_BASE, find_sandbox
from kbench.repo import Patch, TaskError, evaluate_patch, find_task, load_task, solved, suite_tasks
from kbench.repo.audit import _broken, audit_task
from kbench.repo.checkout import checkout, copy_tree
from kbench.repo.integrity import patch_findings
from kbench.repo.patch import PatchError, check_result, glob_match, refusal, snapshot
from kbench.repo.task import Repository
from kbench.repo.tests_run import device_in_tests, run_tests


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    """(task file, patches by name)."""
    root = tmp_path_factory.mktemp("repo")
    task_file, patches = make_task(root)
    return task_file, patches


@pytest.fixture(scope="module")
def task(fixture):
    return load_task(fixture[0])


def quick(fixture, name: str, **options):
    """A patch judged where nothing of it runs (no expert timed beside)."""
    return evaluate_patch(fixture[0], fixture[1][name], "cpu", expert=False, **options)


# --- the task file ---------------------------------------------------------

def test_a_task_file_is_read_with_every_path_resolved(fixture, task):
    folder = fixture[0].parent
    assert task.id == "tinyops/rmsnorm"  # <repository dir>/<task dir> when the file gives none
    assert task.title == "RMSNorm is slow on many rows" and "one by one" in task.statement
    assert task.repository.bundle == folder.parent / "tinyops.bundle" and len(task.repository.commit) == 40
    assert task.allowed == ("tinyops/*.py",)
    assert task.visible_tests == ("tests/test_norm.py",) and task.hidden_tests == ("hidden/test_norm_hidden.py",)
    assert task.tests_timeout == 240.0
    assert task.workload_path == folder / "workload.py" and task.workload().id == task.id
    assert task.expert_patch == folder / "expert.patch" and task.broken_patch == folder / "broken.patch"
    assert load_task(folder).sha256 == task.sha256  # the folder names its task.toml


def test_the_task_hash_follows_every_file_that_defines_it(fixture, task, tmp_path):
    copy = tmp_path / "tinyops"
    shutil.copytree(fixture[0].parent.parent, copy)
    assert load_task(copy / "rmsnorm").sha256 == task.sha256
    hidden = copy / "rmsnorm" / "hidden" / "test_norm_hidden.py"
    hidden.write_text(hidden.read_text() + "\n# one more line\n")
    assert load_task(copy / "rmsnorm").sha256 != task.sha256


def test_bundled_tasks_are_found_by_id_under_their_folder(fixture):
    root = fixture[0].parent.parent.parent
    assert [t.id for t in suite_tasks(root)] == ["tinyops/rmsnorm"]
    assert find_task("tinyops/rmsnorm", root).path == fixture[0]
    assert find_task(fixture[0]).id == "tinyops/rmsnorm"
    assert suite_tasks(root / "nothing-here") == []
    for wrong in ("tinyops/none", "../tasks/tinyops/rmsnorm", ""):
        with pytest.raises(TaskError, match="no task file or bundled task id"):
            find_task(wrong, root)


@pytest.mark.parametrize(("old", "new", "defect"), [
    ('title = "', 'titel = "', r"unknown key\(s\) \['titel'\]"),
    ('commit = "', 'commit = "abc', "40-hex"),
    ('bundle = "../tinyops.bundle"', 'bundle = "../tinyops.bundle"\npath = "."', "exactly one of bundle"),
    ('bundle = "../tinyops.bundle"', 'bundle = "../nothing.bundle"', "repository.bundle names '../nothing.bundle'"),
    ('allowed = ["tinyops/*.py"]', "allowed = []", "patch.allowed is empty"),
    ('allowed = ["tinyops/*.py"]', 'allowed = ["../*.py"]', "without '..'"),
    ('hidden = ["hidden/test_norm_hidden.py"]', 'hidden = ["hidden/gone.py"]', "not a file beside it"),
    ("timeout_s = 240", 'timeout_s = "soon"', "positive number of seconds"),
    ('file = "workload.py"', 'file = "expert.patch"', "its workload"),
    ('visible = ["tests/test_norm.py"]', 'visible = "tests/test_norm.py"', "tests.visible must be a list"),
    ('title = "', 'kind = ""\ntitle = "', "kind must be a non-empty string"),
])
def test_an_unusable_task_file_names_itself_and_the_defect(fixture, tmp_path, old, new, defect):
    copy = tmp_path / "tinyops"
    shutil.copytree(fixture[0].parent.parent, copy)
    task_file = copy / "rmsnorm" / "task.toml"
    text = task_file.read_text()
    assert old in text
    task_file.write_text(text.replace(old, new, 1))
    with pytest.raises(TaskError, match=defect) as raised:
        load_task(task_file)
    assert str(task_file) in str(raised.value)


def test_a_file_that_is_not_toml_is_a_task_error(tmp_path):
    (tmp_path / "task.toml").write_text("title = \n")
    with pytest.raises(TaskError, match="not valid TOML"):
        load_task(tmp_path)


# --- the checkout ----------------------------------------------------------

def test_the_checkout_is_the_pinned_commit_and_nothing_else(task, tmp_path):
    tree = checkout(task.repository, tmp_path / "base")
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == [
        "README.md", "tests/test_norm.py", "tinyops/__init__.py", "tinyops/norm.py"]
    with pytest.raises(TaskError, match="cannot check out commit"):
        checkout(Repository("0" * 40, bundle=task.repository.bundle), tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_a_repository_on_disk_is_checked_out_at_its_commit_not_its_head(task, tmp_path):
    source = tmp_path / "clone"
    git("clone", "-q", str(task.repository.bundle), str(source), cwd=tmp_path)
    (source / "later.txt").write_text("after the pinned commit\n")
    git("add", "-A", cwd=source)
    git("commit", "-qm", "later", cwd=source)
    tree = checkout(Repository(task.repository.commit, path=source), tmp_path / "pinned")
    assert not (tree / "later.txt").exists() and (tree / "tinyops" / "norm.py").is_file()


# --- the paths a patch may touch -------------------------------------------

def test_globs_match_segment_by_segment():
    assert glob_match("tinyops/*.py", "tinyops/norm.py")
    assert not glob_match("tinyops/*.py", "tinyops/kernels/norm.py")  # * stays within a segment
    assert not glob_match("tinyops/*.py", "tinyops/norm.pyc")
    assert glob_match("tinyops/**/*.py", "tinyops/kernels/a/norm.py")
    assert glob_match("tinyops/**/*.py", "tinyops/norm.py")  # ** may be no segment at all
    assert not glob_match("tinyops/**", "other/tinyops/norm.py")


def test_what_a_patch_may_not_touch_whatever_the_task_allows(task):
    wide = replace(task, allowed=("**",))
    assert refusal(wide, "tinyops/norm.py") is None
    assert refusal(wide, "tinyops/test_helpers.py") is None  # named like a test, but not one of the task's
    assert refusal(wide, "docs/workload_notes.py") is None
    assert "outside the repository" in refusal(wide, "../evil.py")
    assert "outside the repository" in refusal(wide, "/etc/passwd")
    assert "git's own data" in refusal(wide, ".git/hooks/pre-commit")
    assert "one of the task's tests" in refusal(wide, "tests/test_norm.py")
    assert "hidden test" in refusal(wide, "hidden/test_norm_hidden.py")
    assert "in the folder of a hidden test" in refusal(wide, "hidden/__init__.py")
    assert "workload" in refusal(wide, "workload.py")
    assert "configures the tests" in refusal(wide, "tinyops/conftest.py")
    assert "configures the tests" in refusal(wide, "pyproject.toml")
    assert "not among the paths this task allows" in refusal(task, "README.md")


def test_a_new_top_level_module_may_not_hide_an_installed_one(task, tmp_path):
    wide = replace(task, allowed=("**",))
    base = checkout(task.repository, tmp_path / "base")
    before = snapshot(base)
    for name, hides in [("pytest.py", "pytest"), ("_pytest/python.py", "_pytest"), ("torch/__init__.py", "torch"),
                        ("tinyops/pytest.py", None), ("tinyops_fast/__init__.py", None), ("notes.txt", None)]:
        patched = copy_tree(base, tmp_path / name.replace("/", "-"))
        (patched / name).parent.mkdir(parents=True, exist_ok=True)
        (patched / name).write_text("x = 1\n")
        if hides is None:
            assert check_result(wide, before, patched) == [name]
        else:
            with pytest.raises(PatchError, match=f"would hide the installed module {hides} "):
                check_result(wide, before, patched)


@pytest.mark.parametrize(("name", "status", "reason"), [
    ("tests", "rejected", "patch-path: tests/test_norm.py is one of the task's tests"),
    ("rename", "rejected", "patch-path: tests/test_norm.py is one of the task's tests"),  # git names only the new path
    ("workload", "rejected", "patch-path: workload.py is the workload's file name"),
    ("outside", "rejected", "patch-path: README.md is not among the paths this task allows"),
    ("symlink", "rejected", "patch-path: tinyops/fast.py is a symbolic link"),
    ("binary", "rejected", "patch-path: tinyops/table.py is a binary file"),
    ("introspection", "rejected", "introspection: tinyops/norm.py: uses gc.get_objects"),
    ("stale", "compile_error", "the patch does not apply to the pinned revision"),
])
def test_a_patch_is_refused_before_any_of_it_runs(fixture, name, status, reason):
    verdict = quick(fixture, name)
    assert (verdict.status, verdict.track, verdict.correct) == (status, "repo", False)
    assert verdict.reason.startswith(reason), verdict.reason
    assert verdict.problem == "tinyops/rmsnorm" and verdict.solution_path == str(fixture[1][name].resolve())
    assert "tests" not in verdict.phase_seconds  # nothing ran
    assert verdict.speedup == {"base": None}


def test_text_that_is_no_patch_is_a_compile_error(fixture):
    verdict = evaluate_patch(fixture[0], Patch("Here is the fix: use torch.rsqrt.\n"), "cpu", expert=False)
    assert verdict.status == "compile_error" and verdict.solution_path is None
    assert "no file diff" in verdict.reason or "not one git can read" in verdict.reason


def test_integrity_findings_count_only_what_the_patch_brings(tmp_path):
    base, patched = tmp_path / "base", tmp_path / "patched"
    for tree in (base, patched):
        (tree / "pkg").mkdir(parents=True)
    old = "import torch\n\ndef sample(seed):\n    torch.manual_seed(seed)\n    return torch.rand(1)\n"
    (base / "pkg" / "sampling.py").write_text(old)
    (patched / "pkg" / "sampling.py").write_text(old + "\ndef faster():\n    return 1\n")  # the seeding was there
    assert patch_findings(base, patched, ["pkg/sampling.py"]) == []
    (patched / "pkg" / "sampling.py").write_text(old + "\ndef again():\n    torch.manual_seed(0)\n")
    (patched / "pkg" / "new.py").write_text("import threading\nthreading.Thread(target=print).start()\n")
    found = patch_findings(base, patched, ["pkg/new.py", "pkg/sampling.py"])
    assert [(f.rule, f.message.split(":")[0]) for f in found] == [("threads", "pkg/new.py"),
                                                                   ("global-state", "pkg/sampling.py")]


# --- the command line ------------------------------------------------------

def test_tasks_list_and_show(fixture):
    runner = CliRunner()
    root = str(fixture[0].parent.parent.parent)
    listed = runner.invoke(app, ["tasks", "list", "--dir", root, "--json"])
    assert listed.exit_code == 0, listed.output
    assert [row["id"] for row in json.loads(listed.output)] == ["tinyops/rmsnorm"]
    shown = runner.invoke(app, ["tasks", "show", "tinyops/rmsnorm", "--dir", root])
    assert shown.exit_code == 0 and "allowed: tinyops/*.py" in shown.output and "one by one" in shown.output


def test_eval_patch_exits_as_eval_does(fixture):
    runner = CliRunner()
    task_file, patches = str(fixture[0]), fixture[1]
    judged = runner.invoke(app, ["eval-patch", str(patches["tests"]), "--task", task_file, "--device", "cpu",
                                 "--json", "--no-expert"])
    assert judged.exit_code == 0, judged.output
    assert json.loads(judged.output)["status"] == "rejected"
    for args, message in [
        ([str(patches["tests"]), "--task", "tinyops/none"], "no task file or bundled task id 'tinyops/none'"),
        ([str(Path(patches["tests"]).with_name("none.patch")), "--task", task_file], "cannot be read"),
        ([str(patches["tests"]), "--task", task_file, "--device", "tpu"], "unknown device"),
    ]:
        result = runner.invoke(app, ["eval-patch", *args])
        assert result.exit_code == 2
        assert message in result.output and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1
    audit = runner.invoke(app, ["tasks", "audit", "tinyops/none", "--device", "cpu"])
    assert audit.exit_code == 2 and "no task file or bundled task id" in audit.output


def test_the_audit_says_why_a_task_failed_as_soon_as_it_is_done(monkeypatch):
    """A cut-off audit (a GPU session's time spent) still leaves each failed check's reason."""
    def audit_task(task, device, size, **options):
        checks = {"base_tests": {"ok": True, "detail": "passed"}, "workload": {"ok": True, "detail": "sound"},
                  "broken": {"ok": False, "detail": "no hidden test fails on it"},
                  "expert": {"ok": True, "detail": "speedup 3x"}}
        if task.id.endswith("chamfer-fused"):
            raise KeyboardInterrupt  # the run is cut off in the second task
        return {"id": task.id, "checks": checks, "notes": [], "ok": False}

    monkeypatch.setattr("kbench.repo.audit.audit_task", audit_task)
    result = CliRunner().invoke(app, ["tasks", "audit", "pointkit/ball-query-scan", "pointkit/chamfer-fused",
                                      "--device", "cpu"])
    assert "pointkit/ball-query-scan: fails broken" in result.output
    assert "broken: no hidden test fails on it" in result.output


def _expert_check(task, monkeypatch, own_low):
    """The audit's expert check on a GPU verdict made by hand: 1.97x over the base, and ``own_low`` the
    lower end of its fraction of its own speedup, judged beside itself (rounds as tinylm/rotary-cache's)."""
    from kbench.repo.audit import _expert
    from kbench.repo.expert import solves
    from repo_run_fixtures import repo_verdict

    verdict = replace(repo_verdict(task.id, "correct", 1.97, low=1.9), device="cuda:0",
                      timing={"rounds": [3.21, 3.51, 5.25]},
                      expert={"fraction": 1.0, "fraction_interval": [own_low, 2 - own_low],
                              "rounds_ms": [3.3, 5.0, 3.9], "solved": solves(1.0, own_low)})
    verdict.baselines["base"]["timing"] = {"rounds": [6.79, 7.3, 11.0]}
    monkeypatch.setattr("kbench.repo.audit.evaluate_patch", lambda *args, **kwargs: verdict)
    return _expert(task, "cuda:0", "default", sandbox=False, timeout=60)


def test_the_audit_fails_an_expert_that_does_not_solve_its_own_task(task, monkeypatch):
    """On the H200 (2026-12-02) tinylm/rotary-cache's expert, re-measured, reached 0.927 of its own speedup
    measured before (1.63-2.11x): a workload that moves so much cannot tell a patch at 95% of the expert
    from one below, so the audit fails the task rather than let no patch, or any, solve it."""
    loose = _expert_check(task, monkeypatch, 0.90)
    assert not loose["ok"] and "does not solve its own task" in loose["detail"]
    assert "'base': [6.79, 7.3, 11.0]" in loose["detail"]
    # Rounds of the expert beside itself a third apart: the author is told no evaluation's rounds would do.
    assert ("moved by 32.6% (standard deviation) from round to round; at that spread the decision takes more "
            "than 64 rounds, and the judge takes at most 32") in loose["detail"]
    assert _expert_check(task, monkeypatch, 0.951)["ok"]


# --- patches that run: tests in the sandbox, the workload in the judge -----

DEVICE_TEST = """import os


def test_the_judged_device_is_named():
    assert os.environ["KBENCH_DEVICE"] == "cpu"
"""


def test_the_tests_are_told_the_judged_device_as_they_see_it(tmp_path):
    """A task's tests make their tensors on KBENCH_DEVICE: on a GPU they must run the patch's GPU
    code, not its CPU fallback. The variable reaches them through the sandbox; a GPU is index 0 there."""
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_device.py").write_text(DEVICE_TEST)
    run = run_tests(tree, ["tests/test_device.py"], "cpu", timeout=120, sandbox=find_sandbox(), build_key="device",
                    scratch=tmp_path)
    assert run.status == "passed", run.summary() + run.output
    assert [o.id for o in run.outcomes] == ["tests/test_device.py::test_the_judged_device_is_named"]
    (tree / "tests" / "test_device.py").write_text(DEVICE_TEST.replace('"cpu"', '"cuda:0"'))
    assert run_tests(tree, ["tests/test_device.py"], "cpu", timeout=120, sandbox=find_sandbox(), build_key="device",
                     scratch=tmp_path).status == "failed"  # the test above can fail
    assert [device_in_tests(d) for d in ("cpu", "cuda:0", "cuda:3")] == ["cpu", "cuda:0", "cuda:0"]

@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a sandbox a uid of its own")
def test_a_repository_s_tests_run_as_a_uid_of_their_own(tmp_path):
    """A test run is the candidate's code: as root it runs as a sandbox uid of its own, not the uid
    every sandbox once shared, so it can use up no other sandbox's processes."""
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_uid.py").write_text(f"import os\n\ndef test_uid():\n    assert os.getuid() >= {UID_BASE}\n")
    run = run_tests(tree, ["tests/test_uid.py"], "cpu", timeout=120, sandbox=find_sandbox(), build_key="uid",
                    scratch=tmp_path)
    assert run.status == "passed", run.summary() + run.output


@pytest.mark.slow
def test_a_broken_patch_fails_a_hidden_test_and_is_named(fixture):
    verdict = quick(fixture, "broken")
    assert verdict.status == "incorrect"
    assert verdict.reason.startswith("a hidden test failed: hidden/test_norm_hidden.py::test_eps_is_used failed")
    assert "2 passed, 1 failed" in verdict.reason.splitlines()[0]
    visible_only = quick(fixture, "broken", hidden_tests=False, measure_time=False)
    assert visible_only.status == "correct"  # what an agent told only the visible tests would see


@pytest.mark.slow
def test_a_patch_right_only_under_pytest_is_caught_where_the_workload_runs(fixture, task):
    """The broken patch made test-aware: every test passes (the hidden one sees the base's code), and the
    task's edge cases, judged as the workload is, fail it; the same patch is correct for a task that
    has none (what catches it is the edge cases, not a rule: the policy is off)."""
    from kbench.repo.attacks import test_aware_patch

    aware = test_aware_patch(task, Patch.from_file(fixture[1]["broken"]))
    verdict = evaluate_patch(task, aware, "cpu", expert=False, measure_time=False, policy="off")
    assert verdict.status == "incorrect" and verdict.reason.startswith("the edge cases"), verdict.reason
    assert "after the tests passed: 3 passed, 0 failed" in verdict.reason
    bare = evaluate_patch(replace(task, edge_cases_path=None), aware, "cpu", expert=False, measure_time=False,
                          policy="off")
    assert bare.status == "correct", bare.reason
    honest = quick(fixture, "expert", measure_time=False)  # the expert's vectorised code meets the edge cases
    assert honest.status == "correct", honest.reason


@pytest.mark.slow
def test_nothing_written_while_the_hidden_tests_run_reaches_the_workload(fixture, task):
    """A patch that copies every test file into the build cache, HOME, /tmp, /dev/shm and its package folder
    under pytest, and prints what it finds elsewhere. In the sandbox it finds the visible tests only (the
    visible run's, the agent's anyway); without one the hidden test comes through /tmp, the control that
    shows the attack works."""
    import glob
    import os

    from kbench.repo.attacks import LOOT, exfiltrating_patch

    patch = exfiltrating_patch(task, Patch.from_file(fixture[1]["broken"]))
    verdict = evaluate_patch(task, patch, "cpu", expert=False, measure_time=False, policy="off")
    assert verdict.status == "correct", verdict.reason
    assert f"{LOOT}test_norm.py" in verdict.output_tail and f"{LOOT}test_norm_hidden.py" not in verdict.output_tail
    assert "test_eps_is_used" not in verdict.output_tail
    try:
        unconfined = evaluate_patch(task, patch, "cpu", expert=False, measure_time=False, policy="off",
                                    sandbox=False)
        assert "test_eps_is_used" in unconfined.output_tail
    finally:
        for path in glob.glob(f"/tmp/{LOOT}*") + glob.glob(f"/dev/shm/{LOOT}*"):
            os.remove(path)


@pytest.mark.slow
def test_a_test_skipped_by_the_patched_code_is_a_failure(fixture):
    """The visible test file's own skip (no GPU here) is the tests' business; one the
    repository's code raises hides the test from the judge."""
    verdict = quick(fixture, "skip")
    assert verdict.status == "incorrect"
    assert verdict.reason.startswith("a visible test failed: tests/test_norm.py::test_shape failed: skipped by code "
                                     "outside the tests: tinyops/norm.py:")
    assert "test_on_the_gpu" not in verdict.reason


@pytest.mark.slow
def test_a_patched_repository_that_does_not_import_is_a_compile_error(fixture):
    verdict = quick(fixture, "syntax")
    assert verdict.status == "compile_error"
    assert verdict.reason.startswith("the patched repository does not import (the visible tests): "
                                     "tests/test_norm.py::<collection>")
    assert "SyntaxError" in verdict.reason and "tinyops/norm.py" in verdict.reason
    assert "kbench-repo-" not in verdict.reason  # the repository's paths, not the private copy's


@pytest.mark.slow
def test_tests_that_do_not_finish_in_the_task_s_time_are_a_timeout(fixture, task):
    verdict = evaluate_patch(replace(task, tests_timeout=5.0), Patch.from_file(fixture[1]["hang"]), "cpu", expert=False)
    assert verdict.status == "timeout"
    assert verdict.reason.startswith("the visible tests: timeout: the tests did not finish within 5 s")


@pytest.mark.slow
def test_the_workload_outputs_are_compared_with_the_base_revision(fixture):
    verdict = quick(fixture, "wrong_large", measure_time=False)
    assert verdict.status == "incorrect"
    assert verdict.reason.startswith("trial 0:") and "after the tests passed: 3 passed" in verdict.reason


@pytest.mark.slow
def test_the_guard_watches_the_patched_code_from_its_first_import(fixture):
    """The workload imports the patched package: the runtime guard's snapshot comes before."""
    verdict = quick(fixture, "clock", measure_time=False)
    assert verdict.status == "rejected"
    assert verdict.reason.startswith("patched-function: replaced while running: time.perf_counter")


@pytest.mark.slow
def test_the_audit_passes_the_fixture_task_and_names_the_expert_speedup(fixture, task):
    record = audit_task(task, "cpu", "small")
    assert record["ok"], record["checks"]
    assert record["checks"]["broken"]["detail"].startswith("caught: hidden/test_norm_hidden.py::test_eps_is_used")
    assert record["checks"]["test_aware"]["detail"].startswith("caught: incorrect: the edge cases")
    assert record["checks"]["exfiltration"]["detail"].startswith("nothing of the hidden files in the verdict")
    assert record["checks"]["expert"]["speedup"] > 1.5  # a loop over rows against one vectorised call
    assert "judged beside itself" in record["checks"]["expert"]["detail"]


@pytest.mark.slow
def test_the_audit_fails_a_task_whose_test_aware_broken_patch_passes(fixture, task, tmp_path):
    """Without edge cases the fixture's workload (eps 1e-6 on unit rows) cannot tell the broken patch's
    constant from eps: only its hidden test can, and the test-aware form hides from it."""
    from kbench.repo.attacks import test_aware_patch
    from kbench.repo.audit import _attack, _caught

    bare = replace(task, edge_cases_path=None)
    check = _attack(bare, test_aware_patch, "cpu", "small", True, 120.0, _caught)
    assert not check["ok"] and "give the task edge cases" in check["detail"]


@pytest.mark.slow
def test_the_audit_fails_a_broken_patch_that_the_hidden_tests_do_not_catch(fixture, task, tmp_path):
    harmless = replace(task, broken_patch=fixture[1]["nothing"])
    base = checkout(task.repository, tmp_path / "base")
    check = _broken(harmless, base, tmp_path, "cpu", find_sandbox())
    assert not check["ok"] and "no hidden test fails on it" in check["detail"]


@pytest.mark.slow
def test_a_patch_that_changes_nothing_is_correct_near_1x_and_does_not_solve(fixture, capsys):
    """The expert is timed beside the patch, in the same rounds: the fraction is the expert's time over
    the patch's, and the verdict's columns stay the base alone."""
    verdict = evaluate_patch(fixture[0], fixture[1]["nothing"], "cpu")
    assert verdict.status == "correct" and verdict.track == "repo"
    assert set(verdict.speedup) == {"base"} and set(verdict.baselines) == {"base"}
    assert set(verdict.speedup_interval) == set(verdict.speedup_interval_within) == {"base"}
    assert 0.5 < verdict.speedup["base"] < 2.0
    low, high = verdict.speedup_interval["base"]
    assert low <= verdict.speedup["base"] <= high
    expert = verdict.expert
    assert expert["speedup"] > 1.5 and expert["fraction"] == pytest.approx(verdict.speedup["base"] / expert["speedup"])
    assert expert["fraction_interval"][0] <= expert["fraction"] <= expert["fraction_interval"][1] < 0.95
    assert expert["runtime_ms"] == pytest.approx(verdict.runtime_ms * expert["fraction"])
    assert len(expert["rounds_ms"]) == len(verdict.timing["rounds"])  # timed in every round
    # On a CPU the expert runs its code as the base does here, but in general through Triton's interpreter:
    # no task is solved or unsolved by a CPU verdict (issue 59).
    assert expert["solved"] is None and solved(verdict) is None and "not meaningful on a CPU" in expert["note"]
    assert verdict.reason.startswith("tests: 3 passed, 0 failed, 0 errors; workload: 5 of 5 trials match")
    print_patch_verdict(verdict)
    shown = capsys.readouterr().out
    assert "speedup over base:" in shown and "of the expert's speedup" in shown and "not meaningful on a CPU" in shown
    assert "solved: no" not in shown


@pytest.mark.slow
def test_the_rounds_go_on_until_the_expert_fraction_is_decided_and_time_the_expert_in_each(fixture):
    """The stopping rule reads the expert's column alone (Sides.decide_at: a task is solved at 95% of the
    expert's speedup), not the base's precision: the rounds stop at the first that decides it or at
    max_rounds, whichever the recorded rounds say, and the expert is timed in each, no more, no fewer."""
    from kbench.judge.protocol.repeatability import columns_settled
    from kbench.judge.protocol.timing import TimingSettings

    timing = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=0.5,
                            rounds=2, max_rounds=4, target_speedup_error=1e-12)  # the base never settles
    verdict = evaluate_patch(fixture[0], fixture[1]["nothing"], "cpu", trials=1, timing=timing)
    assert verdict.status == "correct", verdict.reason
    patch, expert = verdict.timing["rounds"], verdict.expert["rounds_ms"]
    assert len(patch) == len(expert) == len(verdict.baselines["base"]["timing"]["rounds"])
    settled = [columns_settled(patch[:n], {"base": verdict.baselines["base"]["timing"]["rounds"][:n],
                                           "expert": expert[:n]}, timing, {"expert": 0.95}, "cpu")
               for n in range(1, len(patch) + 1)]
    assert settled[-1] and not any(settled[:-1])


@pytest.mark.slow
def test_without_the_expert_timed_there_is_nothing_to_decide_and_the_rounds_are_the_required_ones(fixture):
    """An agent's ``evaluate`` (--no-expert) is not kept waiting for a base that never agrees with itself."""
    from kbench.repo.patch_judge import REPO_TIMING

    verdict = quick(fixture, "expert", trials=1)
    assert verdict.status == "correct" and verdict.expert == {}
    assert len(verdict.timing["rounds"]) == len(verdict.baselines["base"]["timing"]["rounds"]) == REPO_TIMING.rounds


@pytest.mark.gpu
def test_on_a_gpu_the_task_audits_and_only_the_expert_solves_it(fixture, task, tmp_path):
    """The fixture's loop over 512 rows launches thousands of kernels a call; the expert's few
    launches over the whole input are far past 1.2x, and a patch that changes nothing is near 1x."""
    record = audit_task(task, "cuda", "default")
    assert record["ok"], record["checks"]
    assert record["checks"]["expert"]["speedup"] >= 1.2 and record["checks"]["workload"]["eager_ms"] >= 1.0
    nothing = evaluate_patch(task, fixture[1]["nothing"], "cuda", size="default")
    assert nothing.status == "correct" and 0.8 < nothing.speedup["base"] < 1.25 and not solved(nothing)
    expert = evaluate_patch(task, fixture[1]["expert"], "cuda", size="default")
    assert expert.status == "correct"
    assert solved(expert), expert.expert  # the expert's patch judged again solves its own task (issue 29)
