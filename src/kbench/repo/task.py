"""The task file format: one ``task.toml`` per repository-maintenance task (docs/tasks.md).

A task is a repository at a pinned revision (a git bundle kbench ships, or a
path and a commit a user gives), a statement written like an issue, the paths
a patch may change, the repository's visible tests, hidden tests kept beside
the task file, a workload (a problem file whose ``Model`` uses the
repository) and an expert patch. The file is read with ``tomllib`` and checked
whole before anything runs: a field that is missing, misspelt or of the wrong
type, or a file it names that is not there, is a ``TaskError`` naming the task
file and the defect. Nothing here runs the repository's code.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from kbench.suite.problem import Problem, ProblemError, load_problem

TASKS_DIR = Path(__file__).parent / "tasks"
TASK_FILE = "task.toml"
DEFAULT_TESTS_TIMEOUT = 300.0
COMMIT = re.compile(r"[0-9a-f]{40}")

# Every key the format knows, per table: anything else is a typo, refused.
KEYS: dict[str, set[str]] = {
    "": {"id", "title", "kind", "statement", "repository", "patch", "tests", "workload", "expert"},
    "repository": {"bundle", "path", "commit"},
    "patch": {"allowed"},
    "tests": {"visible", "hidden", "timeout_s"},
    "workload": {"file", "tolerance", "edge_cases"},
    "expert": {"patch", "broken"},
}


class TaskError(Exception):
    """A task file that cannot be used, with the file and the defect named."""


@dataclass(frozen=True)
class Repository:
    """Where the task's code comes from: a bundle or a repository on disk, and the pinned commit."""

    commit: str
    bundle: Path | None = None
    path: Path | None = None

    @property
    def source(self) -> Path:
        return self.bundle or self.path  # type: ignore[return-value]


@dataclass(frozen=True)
class Task:
    """A task as read from its ``task.toml``; paths are absolute."""

    id: str
    path: Path  # the task.toml
    title: str
    statement: str
    repository: Repository
    allowed: tuple[str, ...]
    visible_tests: tuple[str, ...]
    hidden_tests: tuple[str, ...]  # relative to the task's folder; the same relative path in the checkout
    tests_timeout: float
    workload_path: Path
    tolerance: dict[str, dict[str, float]] = field(default_factory=dict)
    expert_patch: Path | None = None
    broken_patch: Path | None = None
    edge_cases_path: Path | None = None  # the edge cases the hidden tests check, run as the workload runs
    sha256: str = ""  # of what defines the task (kbench.repo.task.task_sha256)
    kind: str = ""  # the kind of work the expert patch does (a fusion, a layout change, ...): for reports, never prompts

    @property
    def folder(self) -> Path:
        return self.path.parent

    def workload(self) -> Problem:
        """The workload as a problem file (its id the task's), with the task's tolerance over the file's."""
        try:
            problem = load_problem(self.workload_path, problem_id=self.id)
        except ProblemError as exc:
            raise TaskError(f"task file {self.path}: its workload: {exc}") from exc
        return replace(problem, tolerance={**problem.tolerance, **self.tolerance})

    def edge_cases(self) -> Problem | None:
        """The edge-case workload (``workload.edge_cases``): a problem file whose ``Model`` runs the
        repository on the cases the hidden tests check (zero rows, extreme scales, strides, dtypes,
        ties), judged against the base revision as the workload is, outputs only; None without one."""
        if self.edge_cases_path is None:
            return None
        try:
            return load_problem(self.edge_cases_path, problem_id=f"{self.id}#edge-cases")
        except ProblemError as exc:
            raise TaskError(f"task file {self.path}: its edge cases: {exc}") from exc

    def hidden_files(self) -> list[tuple[Path, str]]:
        """Each hidden test file beside the task file, and where it goes in a checkout."""
        return [(self.folder / name, name) for name in self.hidden_tests]


def load_task(path: str | Path, task_id: str | None = None) -> Task:
    """Read and check a ``task.toml`` (or the folder holding one); TaskError naming what is wrong."""
    path = Path(path)
    if path.is_dir():
        path = path / TASK_FILE
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode())
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"task file {path}: cannot be read ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"task file {path}: not valid TOML ({exc})") from exc
    path = path.resolve()
    reader = _Reader(path, data)
    folder = path.parent
    repository = reader.repository()
    hidden = reader.strings("tests", "hidden", default=[])
    for name in hidden:
        reader.relative(name, "tests.hidden")
        if not (folder / name).is_file():
            raise TaskError(f"task file {path}: tests.hidden names {name!r}, which is not a file beside it")
    visible = reader.strings("tests", "visible", default=[])
    for entry in visible:
        reader.relative(entry.split("::", 1)[0], "tests.visible")
    if not visible and not hidden:
        raise TaskError(f"task file {path}: no tests: [tests] needs visible or hidden test paths")
    allowed = reader.strings("patch", "allowed")
    if not allowed:
        raise TaskError(f"task file {path}: patch.allowed is empty: a patch could change nothing")
    for pattern in allowed:
        reader.relative(pattern, "patch.allowed")
    timeout = reader.table("tests").get("timeout_s", DEFAULT_TESTS_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise TaskError(f"task file {path}: tests.timeout_s must be a positive number of seconds")
    workload = reader.file("workload", "file", default="workload.py")
    tolerance = reader.table("workload").get("tolerance", {})
    if not isinstance(tolerance, dict) or not all(
        isinstance(v, dict) and set(v) <= {"atol", "rtol"} and all(isinstance(x, (int, float)) for x in v.values())
        for v in tolerance.values()
    ):
        raise TaskError(f"task file {path}: workload.tolerance must map dtypes to {{atol = ..., rtol = ...}}")
    task = Task(
        id=task_id or reader.string("", "id", default=f"{folder.parent.name}/{folder.name}"),
        path=path,
        title=reader.string("", "title"),
        kind=reader.string("", "kind") if "kind" in data else "",
        statement=reader.string("", "statement"),
        repository=repository,
        allowed=tuple(allowed),
        visible_tests=tuple(visible),
        hidden_tests=tuple(hidden),
        tests_timeout=float(timeout),
        workload_path=workload,
        tolerance={dtype: {k: float(x) for k, x in v.items()} for dtype, v in tolerance.items()},
        expert_patch=reader.file("expert", "patch", default=None),
        broken_patch=reader.file("expert", "broken", default=None),
        edge_cases_path=reader.file("workload", "edge_cases", default=None),
    )
    task.workload()  # a workload that is no problem file is the task's defect, said now
    task.edge_cases()
    return replace(task, sha256=task_sha256(task, raw))


def task_sha256(task: Task, raw: bytes) -> str:
    """What defines the task, hashed: its file, the pinned commit, and the content of every
    file it names beside it (the workload, its edge cases, hidden tests, expert and broken patches)."""
    digest = hashlib.sha256(raw)
    digest.update(task.repository.commit.encode())
    named = [task.workload_path, *(p for p, _ in task.hidden_files()), task.expert_patch, task.broken_patch,
             task.edge_cases_path]
    for file in (p for p in named if p is not None):
        digest.update(b"\0" + file.relative_to(task.folder).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def find_task(id_or_path: str | Path, root: Path | None = None) -> Task:
    """A task by bundled id (``tinylm/fused-rmsnorm``) or by the path of its ``task.toml``
    (or its folder); TaskError if it is neither."""
    path = Path(id_or_path)
    if path.is_file() or (path.is_dir() and (path / TASK_FILE).is_file()):
        return load_task(path)
    bundled = (root or TASKS_DIR) / str(id_or_path) / TASK_FILE
    if str(id_or_path).strip() and ".." not in PurePosixPath(str(id_or_path)).parts and bundled.is_file():
        return load_task(bundled, task_id=str(id_or_path))
    raise TaskError(f"no task file or bundled task id {str(id_or_path)!r}")


def suite_tasks(root: Path | None = None) -> list[Task]:
    """Every bundled task (``<repository>/<task>/task.toml`` under ``root``, by default the
    package's ``tasks/``), in id order."""
    root = root or TASKS_DIR
    return [load_task(path, task_id=path.parent.relative_to(root).as_posix())
            for path in sorted(root.glob(f"*/*/{TASK_FILE}"))]


class _Reader:
    """Typed access to the parsed file, each defect a TaskError naming the file."""

    def __init__(self, path: Path, data: dict[str, Any]):
        self.path, self.data = path, data
        for table, keys in KEYS.items():
            values = self.table(table) if table else data
            unknown = sorted(set(values) - keys)
            if unknown:
                where = f"[{table}]" if table else "the top level"
                raise TaskError(f"task file {path}: unknown key(s) {unknown} in {where}; known: {sorted(keys)}")

    def fail(self, text: str) -> TaskError:
        return TaskError(f"task file {self.path}: {text}")

    def table(self, name: str) -> dict[str, Any]:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.fail(f"{name} must be a table ([{name}])")
        return value

    def string(self, table: str, key: str, default: str | None = None) -> str:
        value = (self.table(table) if table else self.data).get(key, default)
        name = f"{table}.{key}" if table else key
        if value is None:
            raise self.fail(f"{name} is missing")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{name} must be a non-empty string")
        return value

    def strings(self, table: str, key: str, default: list[str] | None = None) -> list[str]:
        value = self.table(table).get(key, default)
        if value is None:
            raise self.fail(f"{table}.{key} is missing")
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(f"{table}.{key} must be a list of non-empty strings")
        return value

    def relative(self, name: str, where: str) -> None:
        """A path inside the repository (or beside the task file): relative, no ``..``."""
        parts = PurePosixPath(name).parts
        if name.startswith("/") or "\\" in name or ".." in parts:
            raise self.fail(f"{where}: {name!r} must be a relative path without '..'")

    def file(self, table: str, key: str, default: str | None) -> Path | None:
        """A file named relative to the task file, which must exist."""
        name = self.table(table).get(key, default)
        if name is None:
            return None
        if not isinstance(name, str) or not name.strip():
            raise self.fail(f"{table}.{key} must be a file name")
        file = (self.path.parent / name).resolve()
        if not file.is_file():
            raise self.fail(f"{table}.{key} names {name!r}, which is not a file ({file})")
        return file

    def repository(self) -> Repository:
        table = self.table("repository")
        if not table:
            raise self.fail("[repository] is missing (bundle or path, and commit)")
        commit = self.string("repository", "commit")
        if not COMMIT.fullmatch(commit):
            raise self.fail(f"repository.commit must be a full 40-hex commit id, not {commit!r}")
        if ("bundle" in table) == ("path" in table):
            raise self.fail("[repository] needs exactly one of bundle (a git bundle) or path (a git repository)")
        if "bundle" in table:
            return Repository(commit, bundle=self.file("repository", "bundle", None))
        where = Path(self.string("repository", "path")).expanduser()
        where = (self.path.parent / where).resolve()
        if not where.is_dir():
            raise self.fail(f"repository.path {str(where)!r} is not a folder")
        return Repository(commit, path=where)
