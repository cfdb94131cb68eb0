"""A clean checkout of a task's pinned revision, and git asked about the files a tree holds.

The repository is cloned (from the task's bundle, or from the repository a
user named) into a temporary folder, the pinned commit is checked out and
verified, and the clone's ``.git`` is removed: what a patch is applied to, the
tests run in and the workload imports is exactly the commit's tree and
nothing else. git runs with no system or global configuration (no user's
hooks, filters or aliases take part) and never looks for a repository above
the folder it is pointed at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from kbench.repo.task import Repository, TaskError

GIT_TIMEOUT = 120.0


class GitError(RuntimeError):
    """git failed; the message is git's own."""


def git_env(folder: Path) -> dict[str, str]:
    """git's environment: no configuration but its defaults, and no repository found above ``folder``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_CEILING_DIRECTORIES=str(folder.resolve().parent), LC_ALL="C")
    return env


def git(args: list[str], folder: Path, data: bytes | None = None) -> bytes:
    """``git args`` run in ``folder``; its stdout, or GitError with what it said."""
    try:
        done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "advice.detachedHead=false", *args],
                              cwd=folder, env=git_env(folder), input=data, capture_output=True,
                              timeout=GIT_TIMEOUT)
    except FileNotFoundError as exc:
        raise GitError("git is not installed (the repository track needs it)") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} did not finish within {GIT_TIMEOUT:g} s") from exc
    if done.returncode != 0:
        said = (done.stderr or done.stdout).decode(errors="replace").strip()
        raise GitError(said or f"git {args[0]} exited with status {done.returncode}")
    return done.stdout


def checkout(repository: Repository, destination: Path) -> Path:
    """The pinned commit's tree, without ``.git``, at ``destination`` (made here; it must not exist).

    TaskError when the repository cannot be cloned or does not hold the commit."""
    source = repository.source
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        git(["clone", "--quiet", "--no-checkout", *(["--shared"] if repository.path else []), str(source),
             str(destination)], destination.parent)
        git(["checkout", "--quiet", "--detach", repository.commit], destination)
        head = git(["rev-parse", "HEAD"], destination).decode().strip()
    except GitError as exc:
        shutil.rmtree(destination, ignore_errors=True)
        raise TaskError(f"repository {source}: cannot check out commit {repository.commit}: {exc}") from exc
    if head != repository.commit:  # a ref or an abbreviation that resolved elsewhere
        shutil.rmtree(destination, ignore_errors=True)
        raise TaskError(f"repository {source}: checked out {head}, not the pinned commit {repository.commit}")
    shutil.rmtree(destination / ".git")
    return destination


def copy_tree(source: Path, destination: Path) -> Path:
    """A copy of a checkout (symbolic links kept as links, never followed)."""
    shutil.copytree(source, destination, symlinks=True)
    return destination
