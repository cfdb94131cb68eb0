"""A patch: the paths it touches, the paths it may not touch, and applying it.

Which paths a patch touches is asked of git (``git apply --numstat -z``), never
read with a diff parser of our own, and then confirmed on the result: the
patch is applied (by ``git apply``, which itself refuses paths outside the
tree and writes through no symbolic link) to a copy of the checkout, and the
two trees are compared file by file. Every path that differs, whatever the
patch text claimed (a rename deletes its source, a mode line makes a link), is
checked against the task's rules; so is every path git names.

Always refused, whatever the task allows: paths outside the repository
(absolute, ``..``), anything in ``.git``, the task's visible and hidden tests,
the workload's file name, pytest's configuration and the files Python or pytest
run by themselves (``conftest.py``, ``pytest.ini``, ``pyproject.toml``,
``setup.cfg``, ``tox.ini``, ``sitecustomize.py``, ``usercustomize.py``), a new
top-level module that would hide an installed one (``pytest.py``), symbolic
links and binary files. Then every touched path must match one of the task's
``allowed`` globs (``*`` within one path segment, ``**`` across segments).
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kbench.repo.checkout import GitError, git
from kbench.repo.task import Task

# Files that run or configure the tests by merely being there.
HARNESS_FILES = {"conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini",
                 "sitecustomize.py", "usercustomize.py"}
# What git apply is given: a model's hunk headers often miscount lines (--recount reads them from
# the hunks), and whitespace is the patch's own business.
APPLY_OPTIONS = ["--recount", "--whitespace=nowarn"]


class PatchFileError(Exception):
    """A patch file that cannot be read at all (a usage error, not a verdict)."""


class PatchError(Exception):
    """A patch that cannot be applied (git's message), or one that touches a path it may not."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


@dataclass(frozen=True)
class Patch:
    """A patch's text (a unified diff, as ``git diff`` writes it) and where it was read from."""

    text: str
    path: Path | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @classmethod
    def from_file(cls, path: str | Path) -> "Patch":
        path = Path(path)
        try:
            return cls(path.read_bytes().decode("utf-8", errors="replace"), path.resolve())
        except OSError as exc:
            raise PatchFileError(f"patch file {path}: cannot be read ({exc})") from exc


def declared_paths(patch: Patch, tree: Path) -> list[str]:
    """The paths git reads in ``patch`` (new names; binary ones end ``\\0binary``); PatchError
    (compile_error, git's message) when git cannot read it as a patch at all."""
    if not patch.text.strip():  # said plainly, not as git's "No valid patches in input (allow with --allow-empty)"
        raise PatchError("compile_error", "the patch is empty: it changes nothing")
    try:
        out = git(["apply", *APPLY_OPTIONS, "--numstat", "-z", "-"], tree, patch.text.encode())
    except GitError as exc:
        raise PatchError("compile_error", f"the patch is not one git can read: {exc}") from exc
    paths = []
    for record in out.decode(errors="surrogateescape").split("\0"):
        if not record:
            continue
        added, _, rest = record.partition("\t")
        _, _, name = rest.partition("\t")
        paths.append(name + ("\0binary" if added == "-" else ""))
    if not paths:
        raise PatchError("compile_error", "the patch changes nothing git can see (no file diff in it)")
    return paths


def apply(patch: Patch, tree: Path) -> None:
    """Apply ``patch`` to the checkout at ``tree``; PatchError (compile_error) with git's message."""
    try:
        git(["apply", *APPLY_OPTIONS, "-"], tree, patch.text.encode())
    except GitError as exc:
        raise PatchError("compile_error", f"the patch does not apply to the pinned revision: {exc}") from exc


def snapshot(tree: Path) -> dict[str, tuple[str, str]]:
    """Every file and symbolic link below ``tree`` (relative POSIX path) -> (kind, digest)."""
    found: dict[str, tuple[str, str]] = {}
    for root, dirs, files in os.walk(tree):
        here = Path(root)
        for name in files + [d for d in dirs if (here / d).is_symlink()]:
            path = here / name
            relative = path.relative_to(tree).as_posix()
            if path.is_symlink():
                found[relative] = ("link", os.readlink(path))
            else:
                mode = "x" if os.access(path, os.X_OK) else "-"
                found[relative] = (f"file{mode}", hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def touched_paths(base: dict[str, tuple[str, str]], patched: Path) -> list[str]:
    """The paths whose kind, mode or content differ between ``base`` (a snapshot) and the
    tree at ``patched``: added, removed or changed, sorted."""
    after = snapshot(patched)
    return sorted(p for p in set(base) | set(after) if base.get(p) != after.get(p))


def refusal(task: Task, path: str) -> str | None:
    """Why ``path`` (relative to the repository) may not be touched by a patch to ``task``; None if it may."""
    pure = PurePosixPath(path)
    if not path or path.startswith("/") or ".." in pure.parts or "\\" in path:
        return f"{path!r} is outside the repository"
    if any(part.casefold() == ".git" for part in pure.parts):
        return f"{path} is git's own data"
    for test in task.visible_tests:
        test_path = PurePosixPath(test.split("::", 1)[0])
        if pure == test_path or test_path in pure.parents:
            return f"{path} is one of the task's tests"
    for hidden in map(PurePosixPath, task.hidden_tests):
        if pure == hidden:
            return f"{path} is where a hidden test of the task goes"
        if len(hidden.parts) > 1 and hidden.parent in pure.parents:  # an __init__.py there changes how it imports
            return f"{path} is in the folder of a hidden test of the task ({hidden.parent})"
    if pure.name == task.workload_path.name or pure.name in HARNESS_FILES:
        what = "the workload's file name" if pure.name == task.workload_path.name else "a file that runs or " \
            "configures the tests"
        return f"{path} is {what}"
    if not any(glob_match(pattern, path) for pattern in task.allowed):
        return f"{path} is not among the paths this task allows ({', '.join(task.allowed)})"
    return None


def glob_match(pattern: str, path: str) -> bool:
    """``path`` matches ``pattern`` segment by segment: ``*``, ``?`` and ``[...]`` within one
    segment, ``**`` any number of segments (none included)."""
    return _match(PurePosixPath(pattern).parts, PurePosixPath(path).parts)


def _match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_match(pattern[1:], parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pattern[0]) and _match(pattern[1:], parts[1:])


def check_paths(task: Task, paths: list[str]) -> None:
    """PatchError (rejected, naming the path and the rule) for the first path a patch may not touch."""
    for path in paths:
        name, binary = path.removesuffix("\0binary"), path.endswith("\0binary")
        why = refusal(task, name) or (f"{name} is a binary file" if binary else None)
        if why:
            raise PatchError("rejected", f"patch-path: {why}")


def check_result(task: Task, base: dict[str, tuple[str, str]], patched: Path) -> list[str]:
    """The paths the applied patch changed, each checked (PatchError, rejected): no symbolic
    link, no binary file, nothing the task refuses. Returns them."""
    touched = touched_paths(base, patched)
    check_paths(task, touched)
    tops = {PurePosixPath(path).parts[0] for path in base}
    for path in touched:
        if (installed := shadowed(path, tops)) is not None:
            raise PatchError("rejected", f"patch-path: {path} would hide the installed module {installed} "
                                         "(the tests and the workload import the repository first)")
        file = patched / path
        if file.is_symlink():
            raise PatchError("rejected", f"patch-path: {path} is a symbolic link")
        if file.is_file() and not _text(file.read_bytes()):
            raise PatchError("rejected", f"patch-path: {path} is a binary file")
    return touched


def shadowed(path: str, tops: set[str]) -> str | None:
    """The installed module a new top-level Python module or package at ``path`` would hide
    (``pytest.py``, ``_pytest/__init__.py``: the repository comes first on the import path of
    the tests and of the workload), where the base revision has no such top-level name."""
    parts = PurePosixPath(path).parts
    if not path.endswith(".py") or parts[0] in tops:
        return None
    name = parts[0].removesuffix(".py")
    try:
        found = name.isidentifier() and importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    return name if found else None


def _text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
