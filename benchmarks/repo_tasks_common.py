"""What benchmarks/repo_tasks_check.py and benchmarks/repo_experts.py share about the bundled repository tasks.

Self-contained on purpose: it reads task.toml with tomllib, makes checkouts with
plain git and runs workloads through benchmarks/repo_workload_worker.py, so it
works whether or not kbench.repo (the track's judge) has landed. Where kbench.repo
is importable, it is used instead: each task file is loaded with its loader (a
task it refuses is reported), checkouts are its clean checkouts, and patches are
applied and their paths checked by its rules.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "src" / "kbench" / "repo" / "tasks"
WORKER = Path(__file__).resolve().parent / "repo_workload_worker.py"
# Paths no patch may touch, whatever `allowed` says (TRACK29.md).
NEVER = ("tests/*", "tests/**", "hidden/*", "hidden/**", "conftest.py", "*/conftest.py", ".git/*", "workload.py")


@dataclass(frozen=True)
class SuiteTask:
    """A task as the scripts need it: paths resolved, nothing run."""

    id: str
    directory: Path
    title: str
    kind: str
    bundle: Path
    commit: str
    allowed: tuple[str, ...]
    visible: tuple[str, ...]
    hidden: tuple[Path, ...]
    timeout_s: int
    workload: Path
    expert: Path
    broken: Path
    tolerance: dict = field(default_factory=dict)
    official: object | None = None  # kbench.repo.task.Task, where kbench.repo is importable


def load(toml_path: Path) -> SuiteTask:
    data = tomllib.loads(toml_path.read_text())
    here = toml_path.parent
    repo = data["repository"]
    if "bundle" not in repo:
        raise ValueError(f"{toml_path}: the suite's tasks name a bundle")
    return SuiteTask(
        id=data.get("id", f"{here.parent.name}/{here.name}"),
        directory=here,
        title=data["title"],
        kind=data.get("kind", ""),
        bundle=(here / repo["bundle"]).resolve(),
        commit=repo["commit"],
        allowed=tuple(data["patch"]["allowed"]),
        visible=tuple(data["tests"]["visible"]),
        hidden=tuple(here / h for h in data["tests"].get("hidden", [])),
        timeout_s=int(data["tests"].get("timeout_s", 300)),
        workload=here / data["workload"]["file"],
        expert=here / data["expert"]["patch"],
        broken=here / data["expert"]["broken"],
        tolerance=data["workload"].get("tolerance", {}),
        official=official_task(toml_path),
    )


def kbench_repo():
    """kbench.repo's checkout, patch and task modules, or None where it has not landed."""
    try:
        from kbench.repo import checkout, patch, task  # type: ignore[import-not-found]
    except ImportError:
        return None
    return checkout, patch, task


def official_task(toml_path: Path) -> object | None:
    """The task as kbench.repo.task loads it (TaskError on a task it refuses), or None without kbench.repo."""
    modules = kbench_repo()
    return modules[2].load_task(toml_path) if modules else None


def suite(only: list[str] | None = None) -> list[SuiteTask]:
    tasks = [load(p) for p in sorted(TASKS.glob("*/*/task.toml"))]
    if only:
        unknown = set(only) - {t.id for t in tasks}
        if unknown:
            raise SystemExit(f"unknown task(s): {', '.join(sorted(unknown))}; known: {', '.join(t.id for t in tasks)}")
        tasks = [t for t in tasks if t.id in only]
    return tasks


def git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip() or done.stdout.strip()}")
    return done


def checkout(task: SuiteTask, into: Path) -> Path:
    """A clean checkout of the pinned commit from the task's bundle; the commit checked."""
    target = into / "repo"
    if task.official is not None:
        return kbench_repo()[0].checkout(task.official.repository, target)
    git("clone", "--quiet", "--no-checkout", str(task.bundle), str(target))
    git("checkout", "--quiet", "--detach", task.commit, cwd=target)
    head = git("rev-parse", "HEAD", cwd=target).stdout.strip()
    if head != task.commit:
        raise RuntimeError(f"{task.id}: checked out {head}, pinned {task.commit}")
    return target


def patch_paths(patch: Path, repo: Path) -> list[str]:
    """The paths a patch touches, as git reads them (new and renamed files included)."""
    out = git("apply", "--numstat", "-z", str(patch), cwd=repo).stdout
    paths: list[str] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        if not entry:
            i += 1
            continue
        added, removed, name = entry.split("\t", 2)
        if name == "":  # a rename: the old and new names follow
            paths += [fields[i + 1], fields[i + 2]]
            i += 3
        else:
            paths.append(name)
            i += 1
    return paths


def forbidden_paths(task: SuiteTask, paths: list[str]) -> list[str]:
    """Paths outside `allowed`, or among those never allowed."""
    bad = []
    for path in paths:
        never = any(fnmatch.fnmatchcase(path, g) for g in NEVER) or path.startswith(("/", "../")) or "/../" in path
        allowed = any(fnmatch.fnmatchcase(path, g) for g in task.allowed)
        if never or not allowed:
            bad.append(path)
    return bad


def apply_patch(task: SuiteTask, patch: Path, repo: Path) -> list[str]:
    """Apply a patch after checking it applies and touches only allowed paths; the paths it touched."""
    if task.official is not None:
        return _official_apply(task, patch, repo)
    git("apply", "--check", str(patch), cwd=repo)
    paths = patch_paths(patch, repo)
    bad = forbidden_paths(task, paths)
    if bad:
        raise RuntimeError(f"{task.id}: {patch.name} touches paths it may not: {bad}")
    git("apply", str(patch), cwd=repo)
    return paths


def _official_apply(task: SuiteTask, patch: Path, repo: Path) -> list[str]:
    """kbench.repo's way: the paths git declares checked, the patch applied, the changed tree checked."""
    rules = kbench_repo()[1]
    text = rules.Patch.from_file(patch)
    try:
        rules.check_paths(task.official, rules.declared_paths(text, repo))
        before = rules.snapshot(repo)
        rules.apply(text, repo)
        return rules.check_result(task.official, before, repo)
    except rules.PatchError as exc:
        raise RuntimeError(f"{task.id}: {patch.name}: {exc.status}: {exc.reason}") from exc


def add_hidden_tests(task: SuiteTask, repo: Path) -> list[str]:
    """Copy the hidden test files into the checkout at their place beside task.toml; their relative paths."""
    placed = []
    for source in task.hidden:
        relative = source.relative_to(task.directory)
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, repo / relative)
        placed.append(str(relative))
    return placed


@dataclass
class TestRun:
    ok: bool
    failed: list[str]
    tail: str


def run_pytest(repo: Path, paths: list[str], timeout_s: int) -> TestRun:
    """pytest on ``paths`` inside the checkout; the failing test ids."""
    report = repo / ".kbench-junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *paths]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        done = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return TestRun(False, ["<timeout>"], f"pytest ran past {timeout_s} s")
    failed = junit_failures(report) if report.exists() else []
    ok = done.returncode == 0
    if not ok and not failed:
        failed = [f"<pytest exit {done.returncode}>"]
    return TestRun(ok, failed, (done.stdout + done.stderr)[-3000:])


def junit_failures(report: Path) -> list[str]:
    import xml.etree.ElementTree as ET

    failed = []
    for case in ET.parse(report).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(f"{case.get('classname')}::{case.get('name')}")
    return failed


class Scratch:
    """A temporary directory removed on exit (kept with KBENCH_KEEP_SCRATCH=1, for a look)."""

    def __enter__(self) -> Path:
        self.path = Path(tempfile.mkdtemp(prefix="kbench-repo-"))
        return self.path

    def __exit__(self, *exc: object) -> None:
        if os.environ.get("KBENCH_KEEP_SCRATCH") != "1":
            shutil.rmtree(self.path, ignore_errors=True)


def worker_command(repo: Path, task: SuiteTask, size: str, device: str, *extra: str) -> list[str]:
    return [sys.executable, str(WORKER), "--checkout", str(repo), "--workload", str(task.workload),
            "--size", size, "--device", device, *extra]


def worker_env(device: str) -> dict[str, str]:
    """The judge's worker environment in miniature: kbench's src importable (for the problem loader),
    Triton's interpreter on a CPU."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src")
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env
