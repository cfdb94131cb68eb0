"""The agent loop on repository tasks: what a turn asks, and the patch taken from what comes back.

The loop (kbench.agents.loop) is the kernel track's own: samples, turns, the best
judged turn, resumption, every prompt and reply stored. For a run of the repository
track it asks here instead: turn 1 renders the ``repo`` template (the statement, the
allowed files at the pinned revision, the visible tests' names), turn t > 1 the
``repo-refine`` template with the previous patch and the judge's verdict on it, the
hidden tests kept out of it (kbench.agents.repo_prompts). A model's answer is the
unified diff read out of its reply (kbench.agents.reply.extract_patch); a command
agent's is the diff git makes of its workspace (kbench.agents.repo_workspace).
"""

from __future__ import annotations

from typing import Any

from kbench.agents import reply
from kbench.agents.providers import Reply, Request
from kbench.agents.repo_prompts import TaskContext, feedback_for, render_repo, task_context
from kbench.repo.checkout import GitError
from kbench.repo.task import TaskError
from kbench.runs.records import TurnRecord
from kbench.runs.runner import RunError

NO_PREVIOUS_PATCH = "(no usable patch was taken from your previous reply)"


def repo_request(agent: Any, sample: Any, turn: int, contexts: dict[str, TaskContext]) -> tuple[Request, dict]:
    """The request for ``turn`` of a sample of a task (``sample.problem``), and its prompt's record.
    ``contexts`` caches each task's prompt material (a checkout read once per task)."""
    task = sample.problem
    if task.id not in contexts:
        try:
            contexts[task.id] = task_context(task)
        except (TaskError, GitError, OSError) as exc:
            raise RunError(f"task {task.id}: its repository cannot be read for the prompt: {exc}") from exc
    context = contexts[task.id]
    previous = None
    if turn == 1:
        text, prompt = render_repo(agent.template, context, gpu=agent.gpu)
    else:
        earlier: TurnRecord = sample.turns[turn - 1]
        previous = next((sample.turns[t].source for t in range(turn - 1, 0, -1) if sample.turns[t].source), None)
        verdict = earlier.verdict or {"status": earlier.status, "reason": earlier.reason,
                                      "speedup": earlier.speedup or None}
        text, prompt = render_repo(agent.refine_template, context, gpu=agent.gpu,
                                   previous_patch=previous or NO_PREVIOUS_PATCH,
                                   feedback=feedback_for(verdict, context), turn=turn)
    text = agent.provider.instructions(text, previous)
    return Request(text, task.id, "", sample.index, turn, previous, task=task), prompt.to_dict()


def patch_of(answer: Reply) -> tuple[str | None, dict[str, Any], str | None]:
    """The patch to judge, the extraction's record, and why there is none (or None)."""
    if answer.solution is not None:
        return answer.solution, {"ok": True, "how": "git", "message": "the diff git made of the agent's repo/"}, None
    if not answer.answer_in_text:
        why = answer.details.get("patch_failure") or "the agent changed nothing in repo/"
        return None, {"ok": False, "how": "git", "message": why}, why
    extraction = reply.extract_patch(answer.text)
    if extraction.ok:
        return extraction.code, extraction.to_dict(), None
    return None, extraction.to_dict(), f"{extraction.failure}: {extraction.message}"
