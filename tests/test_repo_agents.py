"""What agents on repository tasks are asked and what is taken back: the diff read out of a reply,
the prompts (the allowed files shown, the hidden tests never named), and the command agent's
patch, made by git outside its sandbox whatever the agent did to its own repository.
Nothing here judges a patch."""

import os
import subprocess

import pytest
from repo_fixture import make_task

from kbench.agents.prompts import Feedback
from kbench.agents.reply import extract_patch
from kbench.agents.repo_prompts import HIDDEN_FAILURE, REPO_TEMPLATES, feedback_for, render_repo, task_context
from kbench.repo.hidden import WITHHELD
from kbench.agents.repo_workspace import PatchRepo, commit_for_agent
from kbench.repo.checkout import checkout
from kbench.repo.patch import Patch, apply
from kbench.repo.task import load_task

NORM_DIFF = """diff --git a/tinyops/norm.py b/tinyops/norm.py
--- a/tinyops/norm.py
+++ b/tinyops/norm.py
@@ -1 +1 @@
-old
+new
"""
INIT_DIFF = """--- a/tinyops/__init__.py
+++ b/tinyops/__init__.py
@@ -1 +1 @@
-a
+b
"""


def fenced(text: str, tag: str = "diff") -> str:
    return f"```{tag}\n{text}```\n"


def test_the_diff_is_read_out_of_a_fenced_block_among_prose():
    found = extract_patch(f"The loop is the problem.\n\n{fenced(NORM_DIFF)}\nThis vectorises it.")
    assert found.ok and found.code == NORM_DIFF and found.how == "fenced"
    assert "tinyops/norm.py" in found.message


def test_blocks_for_different_files_are_joined_and_a_restated_file_replaces_the_earlier_block():
    joined = extract_patch(fenced(NORM_DIFF) + "and\n" + fenced(INIT_DIFF, "patch"))
    assert joined.ok and joined.code == NORM_DIFF + INIT_DIFF
    revised = NORM_DIFF.replace("+new", "+newer")
    restated = extract_patch(fenced(NORM_DIFF) + fenced(INIT_DIFF) + "Wait, better:\n" + fenced(revised))
    assert restated.ok and restated.code == INIT_DIFF + revised and "replaced" in restated.message
    code_only = extract_patch(fenced("import torch\n", "python") + fenced(NORM_DIFF, ""))
    assert code_only.ok and code_only.code == NORM_DIFF  # a python block is no diff: left out


def test_an_unfenced_diff_is_taken_from_its_first_header():
    found = extract_patch("Here it is:\n" + NORM_DIFF)
    assert found.ok and found.code == NORM_DIFF and found.how == "whole-reply"


@pytest.mark.parametrize("reply, says", [
    ("", "empty"),
    ("I would rather not.", "no unified diff"),
    (fenced("import torch\n", "python"), "none a unified diff"),
    (fenced("@@ -1 +1 @@\n-old\n+new\n"), "without ---/+++ file headers"),
])
def test_a_reply_without_a_diff_is_no_diff_naming_why(reply, says):
    found = extract_patch(reply)
    assert not found.ok and found.failure == "no_diff" and says in found.message


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    root = tmp_path_factory.mktemp("task")
    task_file, patches = make_task(root)
    return load_task(task_file, task_id="tinyops/rmsnorm"), patches


def test_the_prompt_shows_the_allowed_files_and_visible_tests_never_the_hidden_ones(fixture):
    task, _ = fixture
    context = task_context(task)
    assert [path for path, _ in context.files] == ["tinyops/__init__.py", "tinyops/norm.py"]  # not README, tests
    text, prompt = render_repo(REPO_TEMPLATES["repo"], context, gpu="NVIDIA H200")
    assert "for i in range(rows.shape[0])" in text and "`tests/test_norm.py`" in text
    assert task.statement.strip() in text and "`tinyops/*.py`" in text and "```diff" in text
    assert "test_norm_hidden" not in text and "eps_is_used" not in text
    assert prompt.template == "repo" and prompt.sha256 == REPO_TEMPLATES["repo"].sha256 and prompt.turn == 1
    again, _ = render_repo(REPO_TEMPLATES["repo"], context, gpu="NVIDIA H200")
    assert again == text


def test_a_hidden_tests_failure_is_fed_back_without_its_name_or_output(fixture):
    task, _ = fixture
    context = task_context(task)
    hidden = {"status": "incorrect", "reason": "a hidden test failed: hidden/test_norm_hidden.py::test_eps_is_used",
              "output_tail": "E   assert_close ... eps", "speedup": {"base": None}}
    told = feedback_for(hidden, context)
    assert told.reason == f"incorrect: {HIDDEN_FAILURE}" and told.detail == ""
    both = {**hidden, "reason": "a hidden test failed: hidden/test_norm_hidden.py::test_eps_is_used E (1 failed)\n"
            "hidden/test_norm_hidden.py::test_eps_is_used: eps\ntests/test_norm.py::test_values: values differ"}
    told_both = feedback_for(both, context)  # the visible test's failure is the agent's to see
    assert told_both.reason == f"incorrect: {HIDDEN_FAILURE}\ntests/test_norm.py::test_values: values differ"
    visible = {**hidden, "reason": "a visible test failed: tests/test_norm.py::test_values"}
    assert feedback_for(visible, context) == Feedback.from_verdict(visible)  # the visible tests' are the agent's
    text, prompt = render_repo(REPO_TEMPLATES["repo-refine"], context, previous_patch=NORM_DIFF, feedback=told, turn=2)
    assert "This is turn 2" in text and NORM_DIFF.strip() in text and "test_eps_is_used" not in text
    assert prompt.kind == "refine" and prompt.turn == 2


def test_what_an_agent_is_told_never_quotes_a_hidden_file(fixture):
    """Redacted by content, wherever the text came from (a workload's output, a visible test's message):
    a line holding a distinctive line of the hidden test, or its test's name, is withheld; the rest of
    the output, the visible tests' lines and the repository's own code are told as they are."""
    task, _ = fixture
    context = task_context(task)
    hidden_line = "expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1.0) * w"
    honest = "workload: step 3\nfrom tinyops.norm import RMSNorm, rms_norm\nE   values differ"  # the visible test's line
    leaked = {"status": "correct", "reason": "tests: 3 passed; workload: 5 of 5 trials match",
              "output_tail": f"{honest}\nprinted: {hidden_line!r}\ndef test_eps_is_used():"}
    told = feedback_for(leaked, context)
    assert told.detail.splitlines() == [*honest.splitlines(), WITHHELD, WITHHELD] and told.reason == leaked["reason"]
    assert feedback_for({**leaked, "output_tail": honest}, context).detail == honest
    # A failure of the hidden run, whatever it was, and the edge cases (the hidden tests' cases): one line.
    for reason in ("the hidden tests: crashed: pytest ended with status 1 (3 passed)",
                   "the patched repository does not import (the hidden tests): x::<collection> ...",
                   "the edge cases (what the hidden tests check, run as the workload runs): trial 0: values"):
        told = feedback_for({**leaked, "status": "incorrect", "reason": reason}, context)
        assert told.reason == f"incorrect: {HIDDEN_FAILURE}" and told.detail == "", reason
    visible = {**leaked, "status": "timeout", "reason": "the visible tests: timeout: the tests did not finish"}
    assert feedback_for(visible, context).reason == visible["reason"]


def workspace(task, tmp_path):
    tree = checkout(task.repository, tmp_path / "ws" / "repo")
    commit_for_agent(tree)
    (tmp_path / "private").mkdir()
    patches = PatchRepo(tmp_path / "private", tree)
    patches.record_base()
    return tree, patches


def test_the_agents_answer_is_the_diff_git_makes_of_its_workspace(fixture, tmp_path):
    task, patches_by_name = fixture
    tree, patches = workspace(task, tmp_path)
    assert patches.patch() == ""
    apply(Patch(patches_by_name["expert"].read_text()), tree)
    (tree / "tinyops" / "fast.py").write_text("FAST = True\n")  # a new file is part of the answer
    (tree / "tinyops" / "__pycache__").mkdir()
    (tree / "tinyops" / "__pycache__" / "norm.cpython-311.pyc").write_bytes(b"\0compiled")  # running it is not
    (tree / ".pytest_cache").mkdir()
    (tree / ".pytest_cache" / "README.md").write_text("cache\n")
    made = patches.patch()
    assert "diff --git a/tinyops/norm.py b/tinyops/norm.py" in made and "+FAST = True" in made
    assert "pyc" not in made and ".pytest_cache" not in made
    fresh = checkout(task.repository, tmp_path / "fresh")
    apply(Patch(made), fresh)  # the patch applies to a clean checkout, as the judge will apply it
    assert (fresh / "tinyops" / "norm.py").read_text() == (tree / "tinyops" / "norm.py").read_text()


def test_nothing_the_agent_writes_in_its_own_git_runs_when_the_patch_is_made(fixture, tmp_path):
    """The agent owns repo/.git: a command it plants there (fsmonitor, an external diff, a hook)
    would run outside its sandbox if the harness used that repository. It never does."""
    task, patches_by_name = fixture
    tree, patches = workspace(task, tmp_path)
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
    evil.chmod(0o755)
    for key in ("core.fsmonitor", "diff.external", "core.pager"):
        subprocess.run(["git", "config", key, str(evil)], cwd=tree, check=True)
    (tree / ".git" / "hooks" / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (tree / ".git" / "hooks" / "pre-commit").chmod(0o755)
    (tree / ".gitattributes").write_text("*.py diff=evil filter=evil\n")  # names drivers no config of ours defines
    subprocess.run(["git", "config", "filter.evil.clean", str(evil)], cwd=tree, check=True)
    (tree / "tinyops" / "norm.py").write_text((tree / "tinyops" / "norm.py").read_text() + "# faster\n")
    made = patches.patch()
    assert not marker.exists()
    assert "+# faster" in made and "b/.gitattributes" in made  # the attributes file is a change like any other
    assert os.path.isdir(tree / ".git") and ".git/" not in made
