"""The repository track's own attacks, on every bundled task (issue 60): a patch that behaves only under
pytest, and a patch that copies the hidden tests wherever a later run might read them.

Each attack is made out of the task's broken patch (kbench.repo.attacks) and judged on the CPU under the
policy ``off`` (no static rule may be what catches it: the structure must), its outputs checked and not
timed, the expert not timed beside. Two sandboxed pytest runs and two judge evaluations a patch: slow.
"""

from __future__ import annotations

import pytest

from kbench.agents.repo_prompts import feedback_for, task_context
from kbench.repo import Patch, evaluate_patch, suite_tasks
from kbench.repo import attacks
from kbench.repo.attacks import LOOT, exfiltrating_patch, switched

TASKS = suite_tasks()


def judged(task, patch):
    return evaluate_patch(task, patch, "cpu", size="small", trials=2, policy="off", measure_time=False, expert=False)


def test_the_switched_module_keeps_both_versions_whole():
    base = 'from __future__ import annotations\n"""Doc."""\n\nX = """two\nlines"""\n\ndef f():\n    return 1\n'
    patched = 'from __future__ import annotations\n\ndef f():\n    return 2\n'
    namespace: dict = {}
    exec(compile(switched(base, patched), "m.py", "exec"), namespace)  # this test runs under pytest: the base
    assert namespace["f"]() == 1 and namespace["X"] == "two\nlines"
    assert switched(base, patched).startswith("from __future__ import annotations\n")


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.id)
def test_a_patch_broken_only_outside_pytest_and_exfiltrating_the_hidden_tests_is_caught(task, contexts):
    """Both attacks in one patch (one judging a task): the test-aware broken patch, and on top of it the
    exfiltration. The tests see the base revision and pass; the task's edge cases, where the workload
    runs, do not. Nothing the hidden run wrote survives it and the task folders are not mounted in the
    sandbox: the edge cases' worker finds only what the visible run left (the visible tests, the agent's
    anyway), and neither the verdict nor what an agent is told holds a line of a hidden file."""
    aware = attacks.test_aware_patch(task, Patch.from_file(task.broken_patch))
    verdict = judged(task, exfiltrating_patch(task, aware, on_top=True))
    assert not verdict.correct and verdict.reason.startswith("the edge cases"), verdict.reason
    assert "after the tests passed" in verdict.reason  # pytest did not see the bug
    assert f"{LOOT}found" in verdict.output_tail  # the exfiltration ran where the workload runs
    assert not any(name.rsplit("/", 1)[-1] in verdict.output_tail for name in task.hidden_tests)
    hidden = contexts(task).hidden_text
    assert hidden.pieces and hidden.quoted(verdict.reason + verdict.output_tail) == []
    told = feedback_for(verdict, contexts(task))
    assert hidden.quoted(told.reason + told.detail) == []


@pytest.fixture(scope="module")
def contexts():
    """Each task's prompt material (a checkout read once)."""
    made = {}
    return lambda task: made.setdefault(task.id, task_context(task))
