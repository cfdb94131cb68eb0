"""The repository track's prompts: a task's statement, the files a patch may change, the visible
tests' names, and a unified diff asked for (kbench.agents.reply.extract_patch reads it back).

Versioned and hashed as the kernel track's (kbench.agents.prompts): every fixed word we
wrote is in the template's text, so its sha256 pins it; only the task (its id, title,
statement, allowed globs, the allowed files' contents at the pinned revision, the visible
tests), the GPU and, for a refinement turn, the previous patch and the judge's verdict on
it are filled in. Built-in names: ``repo`` (turn 1) and ``repo-refine`` (turn N > 1).

The hidden tests are kept from the model: a verdict that names one, or says the hidden
tests' run failed, is fed back as one line ("a hidden test failed"), without its name,
message or output; and any line of what is fed back that quotes a hidden test file (one of
its distinctive lines, or the name of one of its tests, that the repository itself does not
hold) is withheld, wherever the text came from: the workload's output, a visible test's
message, a reason (``feedback_for``, ``HiddenText``). The redaction is the last line: the
judge's structure keeps the hidden files out of every process that can print to a
verdict (docs/patches.md, what the judge trusts).
"""

from __future__ import annotations

import hashlib
import string
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from kbench.agents.prompts import Feedback, Prompt, PromptError, Template, format_feedback, gpu_facts
from kbench.repo.checkout import checkout
from kbench.repo.hidden import HiddenText
from kbench.repo.patch import glob_match
from kbench.repo.task import Task

REPO_VERSION = "2"  # 2: the edge cases named in the rules (issue 60)
TARGET = "repo"  # a patch may use PyTorch, Triton or anything its repository does: no kernel language is asked
MAX_FILE_CHARS = 60_000  # one file shown whole up to this; a longer one is cut, and the prompt says so
MAX_FILES_CHARS = 200_000  # all the files shown together
# How the judge's reasons name the hidden run, and the edge cases (what the hidden tests check: kbench.repo.patch_judge).
HIDDEN_RUN = ("a hidden test", "the hidden tests", "the edge cases")
HIDDEN_FAILURE = "a hidden test failed (the hidden tests are not shown: check the behaviour the issue and the " \
                 "visible tests describe, edge cases included)"

PLACEHOLDERS = {
    "task_id": "the task's id (repository/task)",
    "task_title": "the task's one-line title",
    "statement": "the task's statement, written like an issue",
    "allowed_paths": "the globs of the files a patch may change (new files included)",
    "files": "the contents of the repository's files the patch may change, at the pinned revision",
    "visible_tests": "the visible tests, one per line",
    "gpu_facts": "the target GPU's facts, one per line",
    "rules": "what the judge does with a patch and refuses",
    "answer_format": "how to lay out the answer (one fenced diff block)",
}
REFINE_PLACEHOLDERS = {
    "turn": "the number of this turn (2 for the first refinement)",
    "previous_patch": "the previous turn's patch",
    "feedback": "the judge's verdict on it: status, reason, speedup over base, output",
}

_RULES = (
    "The judge applies your patch with `git apply` to a clean checkout of the pinned revision and refuses "
    "(status rejected) a patch that touches a path it may not: anything outside the allowed files, the tests "
    "(visible or hidden), the workload, pytest's configuration, symbolic links or binary files. It runs the "
    "visible and the hidden tests with a time limit (a failure is incorrect), compares your code's outputs with "
    "the base revision's on the edge cases the hidden tests check, run as the workload runs, then loads the "
    "workload twice: "
    "once on the base revision and once on yours, in separate processes, yours sandboxed. It compares their "
    "outputs on fresh random inputs within the task's tolerance and times both the same way, interleaved, on "
    "the same device; the speedup is the base's time over yours. The integrity rules of the kernel track "
    "apply to every Python file you change: no reading the judge's state, no walking frames or the garbage "
    "collector, no patching timers or synchronisation, no caching outputs across calls, no work on a side "
    "stream or thread the timer cannot see, no changing global settings (TF32, cuDNN flags, default dtype). "
    "PyTorch, Triton and anything the repository already uses may do the work."
)
_ANSWER = (
    "Reply with your patch as one unified diff against the repository's root, as `git diff` writes it "
    "(`diff --git a/PATH b/PATH`, `--- a/PATH`, `+++ b/PATH`, then `@@` hunks with three lines of context), "
    "in one fenced ```diff block. Paths are relative to the repository's root. Write every hunk in full: "
    "no elisions (`...`) inside a hunk. A new file is a diff from `/dev/null`."
)


def _initial_text() -> str:
    return (
        "You are a performance engineer. Below is an issue filed against a repository at a pinned revision, "
        "the files you may change, and the tests that must keep passing. Write a patch that makes the slow path "
        "the issue describes faster on the target GPU, without changing what the code computes.\n\n"
        "## Target GPU\n\n$gpu_facts\n\n"
        "## Issue: $task_title ($task_id)\n\n$statement\n\n"
        "## The files you may change\n\n"
        "A patch may change (or add) only files matching: $allowed_paths. Their contents at the pinned "
        "revision:\n\n$files\n\n"
        "## Visible tests\n\nThese must keep passing (hidden tests check more of the same behaviour):\n\n"
        "$visible_tests\n\n"
        f"## What the judge does\n\n{_escape(_RULES)}\n\n"
        f"## Answer\n\n{_escape(_ANSWER)}\n"
    )


def _refine_text() -> str:
    return (
        "You are a performance engineer improving a patch to a repository at a pinned revision. This is turn "
        "$turn.\n\n"
        "## Target GPU\n\n$gpu_facts\n\n"
        "## Issue: $task_title ($task_id)\n\n$statement\n\n"
        "## The files you may change\n\n"
        "A patch may change (or add) only files matching: $allowed_paths. Their contents at the pinned "
        "revision (before your patch):\n\n$files\n\n"
        "## Visible tests\n\n$visible_tests\n\n"
        "## Your previous patch\n\n```diff\n$previous_patch\n```\n\n"
        "## The judge's verdict on it\n\n$feedback\n\n"
        "## Task\n\nIf the verdict is not `correct`, fix the cause it names. If it is correct, make the patch "
        "faster without changing what the code computes. Your answer replaces the previous patch: give the "
        "whole patch against the pinned revision, not a patch on top of the previous one.\n\n"
        f"## What the judge does\n\n{_escape(_RULES)}\n\n"
        f"## Answer\n\n{_escape(_ANSWER)}\n"
    )


def _escape(text: str) -> str:
    return text.replace("$", "$$")


REPO_TEMPLATES: dict[str, Template] = {
    "repo": Template("repo", REPO_VERSION, _initial_text(), "initial", TARGET),
    "repo-refine": Template("repo-refine", REPO_VERSION, _refine_text(), "refine", TARGET),
}
DEFAULT_TEMPLATE, DEFAULT_REFINE_TEMPLATE = "repo", "repo-refine"


def get_repo_template(name: str, kind: str) -> Template:
    """A built-in template of the repository track, of ``kind`` (initial or refine)."""
    template = REPO_TEMPLATES.get(name)
    if template is None:
        raise PromptError(f"no built-in template {name!r} for the repository track; built-in: "
                          f"{', '.join(sorted(REPO_TEMPLATES))}")
    if template.kind != kind:
        raise PromptError(f"template {name!r} is a {template.kind!r} template; a {kind!r} one is needed here")
    return template


@dataclass(frozen=True)
class TaskContext:
    """What a prompt says about a task: read once per task from a checkout of its pinned revision."""

    task_id: str
    title: str
    statement: str
    allowed: tuple[str, ...]
    files: tuple[tuple[str, str], ...]  # (path, text) of each allowed file at the pinned revision
    visible_tests: tuple[str, ...]
    hidden_tests: tuple[str, ...]
    hidden_text: HiddenText = field(default_factory=lambda: HiddenText(()))


def task_context(task: Task) -> TaskContext:
    """The task's prompt material: its text, and the allowed files of a fresh checkout (text files only,
    cut at MAX_FILE_CHARS each and MAX_FILES_CHARS together)."""
    with tempfile.TemporaryDirectory(prefix="kbench-prompt-") as scratch:
        tree = checkout(task.repository, Path(scratch) / "checkout")
        paths = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and not p.is_symlink())
        files, total = [], 0
        for path in paths:
            if not any(glob_match(pattern, path) for pattern in task.allowed):
                continue
            try:
                text = (tree / path).read_text()
            except (OSError, UnicodeDecodeError):
                continue
            if len(text) > MAX_FILE_CHARS:
                text = text[:MAX_FILE_CHARS] + f"\n[... {len(text) - MAX_FILE_CHARS} more characters not shown]\n"
            if total + len(text) > MAX_FILES_CHARS:
                files.append((path, "[not shown: the files above fill the prompt's room]\n"))
                continue
            files.append((path, text))
            total += len(text)
        hidden = HiddenText.of(task, tree)
    return TaskContext(task.id, task.title, task.statement, task.allowed, tuple(files), task.visible_tests,
                       task.hidden_tests, hidden)


def files_text(context: TaskContext) -> str:
    if not context.files:
        return "(no file matches yet: a patch adds them)"
    return "\n".join(f"### {path}\n\n```{_language(path)}\n{text.rstrip(chr(10))}\n```\n" for path, text in context.files)


def _language(path: str) -> str:
    return {"py": "python", "md": "markdown", "toml": "toml", "cu": "cuda", "cpp": "cpp"}.get(
        path.rpartition(".")[2], "")


def feedback_for(verdict: Mapping[str, Any] | Feedback, context: TaskContext) -> Feedback:
    """The judge's verdict as the next turn is told it, the hidden tests kept out of it.

    A verdict that names a hidden test file, or whose reason says the hidden tests' run failed (a
    test, an import, a crash, the time limit: kbench.repo.patch_judge words each so), becomes one
    line saying that a hidden test failed, followed only by the reason's lines that name a visible
    test (a failure the model can see for itself); its output (the tests' own) is left out. Any
    other verdict is told whole but for the lines that quote a hidden file (``HiddenText.redact``):
    what a patch prints where the workload runs is its own, and it never holds a hidden file there,
    but a line of one is withheld whatever the way it came."""
    feedback = Feedback.from_verdict(verdict)
    names = [n for name in context.hidden_tests if name for n in (name, Path(name).name)]
    hidden = context.hidden_text
    named = any(n in feedback.reason or n in feedback.detail for n in names)
    if not named and not feedback.reason.startswith(HIDDEN_RUN) and not _hidden_run_failed(feedback.reason):
        return replace(feedback, reason=hidden.redact(feedback.reason), detail=hidden.redact(feedback.detail))
    visible = [test.split("::", 1)[0] for test in context.visible_tests]
    kept = [line for line in feedback.reason.splitlines()
            if any(v in line for v in visible) and not any(n in line for n in names)]
    reason = "\n".join([f"{feedback.status}: {HIDDEN_FAILURE}", *map(hidden.redact, kept)])
    return replace(feedback, reason=reason, detail="")


def _hidden_run_failed(reason: str) -> bool:
    """The reason's first line says the hidden tests' run failed (``the patched repository does not import
    (the hidden tests): ...``)."""
    first = reason.split("\n", 1)[0]
    return any(f"({words})" in first or first.startswith(words) for words in HIDDEN_RUN)


def render_repo(
    template: Template,
    context: TaskContext,
    *,
    gpu: str | None = None,
    previous_patch: str | None = None,
    feedback: Feedback | None = None,
    turn: int | None = None,
) -> tuple[str, Prompt]:
    """The prompt text and its record (as prompts.render's) for a task."""
    values = {
        "task_id": context.task_id,
        "task_title": context.title,
        "statement": context.statement.strip(),
        "allowed_paths": ", ".join(f"`{pattern}`" for pattern in context.allowed),
        "files": files_text(context),
        "visible_tests": "\n".join(f"- `{test}`" for test in context.visible_tests) or "(none)",
        "gpu_facts": gpu_facts(gpu),
        "rules": _RULES,
        "answer_format": _ANSWER,
    }
    if template.kind == "refine":
        if previous_patch is None or feedback is None:
            raise PromptError(f"template {template.name!r} is a refinement: it needs previous_patch and feedback")
        values.update(turn=str(turn or 2), previous_patch=previous_patch.rstrip("\n"),
                      feedback=format_feedback(feedback))
    text = string.Template(template.text).substitute(values)
    prompt = Prompt(template=template.name, version=template.version, sha256=template.sha256, kind=template.kind,
                    target=template.target, origin=template.origin,
                    text_sha256=hashlib.sha256(text.encode()).hexdigest(), gpu=gpu,
                    turn=turn or (2 if template.kind == "refine" else 1))
    return text, prompt
