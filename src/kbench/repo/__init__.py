"""The repository-maintenance track: performance work inside a codebase (docs/tasks.md).

A task (``task``: the ``task.toml`` format, ``find_task``, ``suite_tasks``) is a
repository at a pinned revision, an issue-like statement, the paths a patch
may change, visible and hidden tests, a workload and an expert patch. This
package owns the task format and the bundled tasks (``tasks/``), clean
checkouts of the pinned revision (``checkout``), what a patch touches and may
touch (``patch``), the static integrity rules on the files it changed
(``integrity``), the repository's tests run in the sandbox (``tests_run``),
judging a patch (``patch_judge.evaluate_patch``: a Verdict with ``track =
"repo"``), the expert patch timed beside it (``expert``), the hidden files'
text kept from agents (``hidden``), the track's own attacks made out of a
task's broken patch (``attacks``: test-aware, exfiltrating) and the task audit
(``audit``). The workload is judged by the kernel track's own judge, with a
per-side import path (kbench.judge.processes.sides), never a copy of its protocol.

Sits above the audit, below runs. May import: ``kbench.audit``,
``kbench.judge``, ``kbench.suite``, ``kbench.core``.
"""

from kbench.repo.expert import SOLVED_FRACTION, solved
from kbench.repo.patch import Patch, PatchFileError
from kbench.repo.patch_judge import evaluate_patch
from kbench.repo.task import Task, TaskError, find_task, load_task, suite_tasks

__all__ = [
    "SOLVED_FRACTION",
    "Patch",
    "PatchFileError",
    "Task",
    "TaskError",
    "evaluate_patch",
    "find_task",
    "load_task",
    "solved",
    "suite_tasks",
]
