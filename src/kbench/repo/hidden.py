"""What of a task's hidden files an agent must never be shown, and how a text is cleared of it.

The judge keeps the hidden tests (and the edge cases that restate them) out of every
process whose output reaches a verdict's text: they run in a pytest run of their own
whose folder and build cache are deleted after it, and the bundled tasks' folder is
not mounted in any sandbox (kbench.repo.tests_run, kbench.judge.processes.sandbox). ``HiddenText``
is the last line behind that: any line of a text shown to an agent that quotes a hidden
file (kbench.agents.repo_prompts.feedback_for, the command agent's ``evaluate``), and the
task audit's check that a patch set on exfiltrating them got nothing out
(kbench.repo.audit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kbench.repo.task import Task

WITHHELD = "[a line withheld: it quotes a hidden test]"
MIN_QUOTED_CHARS = 12  # a hidden file's line shorter than this (``import torch``) gives nothing away
TEST_NAME = re.compile(r"\bdef (test_\w+)")


@dataclass(frozen=True)
class HiddenText:
    """What of the hidden test files (and the edge cases: kbench.repo.task.Task.edge_cases) an agent must
    never be shown: each distinctive line (stripped, at least MIN_QUOTED_CHARS long) and each test's
    name, less whatever the repository's own files hold (the visible tests and the code, which an
    agent reads anyway) and the workload's file (its lines show in a traceback of a failing call)."""

    pieces: tuple[str, ...]

    @classmethod
    def of(cls, task: Task, tree: Path | None) -> HiddenText:
        """From the task's hidden files; ``tree``: a checkout of the pinned revision (None: only the workload's
        lines taken off)."""
        pieces: set[str] = set()
        for source in [path for path, _ in task.hidden_files()] + [p for p in [task.edge_cases_path] if p]:
            text = source.read_text(errors="replace")
            pieces.update(line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_QUOTED_CHARS)
            pieces.update(TEST_NAME.findall(text))
        known_files = [task.workload_path, *(tree.rglob("*") if tree is not None else [])]
        if pieces:
            for path in known_files:
                if path.is_file() and not path.is_symlink():
                    try:
                        known = path.read_text()
                    except (OSError, UnicodeDecodeError):
                        continue
                    pieces = {piece for piece in pieces if piece not in known}
        return cls(tuple(sorted(pieces, key=lambda piece: (-len(piece), piece))))

    def redact(self, text: str) -> str:
        """``text`` with every line that holds a piece of the hidden files replaced by WITHHELD."""
        if not self.pieces or not text:
            return text
        return "".join(WITHHELD + ("\n" if line.endswith("\n") else "") if any(p in line for p in self.pieces)
                       else line for line in text.splitlines(keepends=True))

    def quoted(self, text: str) -> list[str]:
        """The pieces of the hidden files that ``text`` holds."""
        return [piece for piece in self.pieces if piece in text]
