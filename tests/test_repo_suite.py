"""The bundled repository suite is whole: every task's files are there, its commit is in its bundle, its
patches apply there and touch only the paths the task allows, its workload is a loadable problem file.

Static checks with plain git, in seconds; running the tests and workloads of every task is
benchmarks/repo_tasks_check.py's job (minutes), and the judge's own audit is kbench.repo's.
"""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

import pytest

from kbench.repo import suite_tasks
from kbench.suite.problem import load_problem

TASKS = Path(__file__).resolve().parent.parent / "src" / "kbench" / "repo" / "tasks"
TASK_FILES = sorted(TASKS.glob("*/*/task.toml"))


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory) -> dict[Path, Path]:
    """One clone per bundle (no working tree needed to check a patch: it is checked out per task)."""
    clones = {}
    for bundle in sorted(TASKS.glob("*/*.bundle")):
        target = tmp_path_factory.mktemp(bundle.stem) / "repo"
        done = git("clone", "--quiet", "--no-checkout", str(bundle), str(target))
        assert done.returncode == 0, done.stderr
        clones[bundle.resolve()] = target
    return clones


def test_the_suite_has_two_repositories_and_at_least_five_tasks_on_each():
    per_repository: dict[str, int] = {}
    for path in TASK_FILES:
        per_repository[path.parent.parent.name] = per_repository.get(path.parent.parent.name, 0) + 1
    assert len(per_repository) >= 2
    assert all(count >= 5 for count in per_repository.values()), per_repository
    assert sum(per_repository.values()) >= 12
    kinds = {suite_task.kind for suite_task in suite_tasks()}  # what the expert patches do, for reports
    assert kinds == {"fusion", "layout change", "host syncs", "batching launches", "caching", "algorithm", "less work"}


@pytest.mark.parametrize("toml_path", TASK_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_a_task_is_whole_and_its_patches_apply_where_allowed(toml_path: Path, checkouts, tmp_path):
    task = tomllib.loads(toml_path.read_text())
    here = toml_path.parent
    assert task["id"] == f"{here.parent.name}/{here.name}"
    assert task["title"] and len(task["statement"]) > 100
    bundle = (here / task["repository"]["bundle"]).resolve()
    commit = task["repository"]["commit"]
    assert len(commit) == 40 and bundle in checkouts
    hidden = [here / h for h in task["tests"]["hidden"]]
    assert hidden and all(h.is_file() and h.name.startswith("test_") for h in hidden)
    assert task["tests"]["visible"] and task["tests"]["timeout_s"] > 0
    load_problem(here / task["workload"]["file"])  # a problem file the judge can load (KBENCH_SMALL names included)
    load_problem(here / task["workload"]["edge_cases"])  # what the hidden tests check, run where the workload runs

    repo = tmp_path / "repo"
    assert git("clone", "--quiet", "--shared", str(checkouts[bundle]), str(repo)).returncode == 0
    assert git("checkout", "--quiet", "--detach", commit, cwd=repo).returncode == 0, f"{commit} not in {bundle}"
    for name in ("patch", "broken"):
        patch = here / task["expert"][name]
        check = git("apply", "--check", str(patch), cwd=repo)
        assert check.returncode == 0, f"{patch.name}: {check.stderr}"
        touched = [line.split("\t")[2] for line in git("apply", "--numstat", str(patch), cwd=repo).stdout.splitlines()]
        assert touched
        for path in touched:
            assert any(fnmatch.fnmatchcase(path, glob) for glob in task["patch"]["allowed"]), f"{patch.name}: {path}"
            assert not path.startswith(("tests/", "hidden/")) and path != "conftest.py"
