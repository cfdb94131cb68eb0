"""The command agent on a repository task: a workspace holding a checkout, and the patch git makes of it.

``RepoCommandProvider`` is ``command/<program>`` for the repository track. For each
request a fresh workspace holds:

- ``repo/``: a clean checkout of the task's pinned revision (kbench.repo.checkout), a git
  repository of its own whose one commit is that tree (the agent may use git as it likes);
  on a refinement turn the previous patch is applied on top, uncommitted;
- ``INSTRUCTIONS.md`` (the rendered prompt and a note on the workspace) and ``STATEMENT.md``;
- ``evaluate``: the tool that judges the workspace's current patch as the run will, with the
  visible tests and a timed run of the workload (never the hidden tests), answered outside
  the agent's sandbox (kbench.agents.evaluate_tool).

The agent's answer is the diff of ``repo/`` against the pinned revision, made by the
harness with git, never taken from the agent: a private git directory outside the
workspace, holding the same base tree, is pointed at ``repo/`` (``--git-dir``/``--work-tree``),
every file added (``__pycache__``, ``*.pyc`` and pytest's cache left out) and the index
diffed against the base. git reads nothing the agent wrote as configuration (the agent's
own ``repo/.git`` is never used by the harness; a ``.gitattributes`` names no driver the
private configuration defines), so no code of the agent's runs outside its sandbox.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from kbench.agents.command_agent import (
    AGENT_LOG_CHARS,
    CommandProvider,
    _absolute_pythonpath,
    _read_usage,
    _tail,
)
from kbench.agents.evaluate_tool import SOCKET, EvaluateServer
from kbench.agents.providers import Reply, Request
from kbench.repo.checkout import GitError, git
from kbench.repo.hidden import HiddenText
from kbench.repo.checkout import checkout as clean_checkout
from kbench.repo.patch import Patch, PatchError, apply
from kbench.repo.task import Task, TaskError

REPO = "repo"
MAX_PATCH_BYTES = 1_000_000
# Never part of an agent's patch: what running the code and its tests leaves behind.
EXCLUDED = ("__pycache__/", "*.pyc", ".pytest_cache/", "*.egg-info/")
IDENTITY = ["-c", "user.name=kbench", "-c", "user.email=kbench@localhost", "-c", "commit.gpgsign=false"]
FLAGS = ("--json", "--no-timing")

TOOL = """#!{python}
\"\"\"Judge this workspace's patch (the diff of repo/ against the pinned revision) as the run will:
the visible tests, then a timed run of the workload on the base and on your revision.
./evaluate [--json] [--no-timing]  (--no-timing: the tests and the outputs' check only, quicker).
The harness judges it, outside this sandbox.\"\"\"
import json, pathlib, socket, sys

here = pathlib.Path(__file__).resolve().parent
flags = [a for a in sys.argv[1:] if a.startswith("-")]
if len(flags) != len(sys.argv) - 1:
    sys.exit("usage: ./evaluate [--json] [--no-timing]  (it judges repo/ as it stands)")
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
    connection.connect(str(here / ".kbench" / {socket!r}))
    connection.sendall(json.dumps({{"file": "repo", "flags": flags}}).encode() + b"\\n")
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
reply = json.loads(answer)
sys.stdout.write(reply["output"])
sys.exit(reply["returncode"])
"""

WORKSPACE_NOTE = """

## Your workspace

You are working in a directory of your own. It holds:

- `repo/`: the repository at the pinned revision{previous_note}, a git repository whose one
  commit is that revision (`git diff` shows your changes);
- `STATEMENT.md`: the issue above;
- `evaluate`: a tool that judges your patch as the benchmark will, on this machine's device
  ({device}, size {size}): run `./evaluate` (`--json` for the verdict as JSON, `--no-timing` for
  the tests and the outputs' check only, quicker). It runs the visible tests and a timed run of the
  workload; the hidden tests run only when your answer is judged.

Edit the files in `repo/` in place; do not reply with a diff. When you stop, or after {time_limit:g}
seconds, your answer is the diff of `repo/` against the pinned revision, made by the harness
(files you add count; `__pycache__` and `.pyc` files do not).
"""


class PatchRepo:
    """The harness's private git directory over a workspace's ``repo/``: the base tree, and the patch."""

    def __init__(self, private: Path, tree: Path):
        self.git_dir, self.tree = private / "base.git", tree

    def _git(self, *args: str, data: bytes | None = None) -> bytes:
        return git(["--git-dir", str(self.git_dir), "--work-tree", str(self.tree), *args], self.git_dir.parent, data)

    def record_base(self) -> None:
        """The tree as it is now (a fresh checkout) as the private repository's one commit."""
        git(["init", "-q", "--bare", str(self.git_dir)], self.git_dir.parent)
        (self.git_dir / "info").mkdir(exist_ok=True)
        (self.git_dir / "info" / "exclude").write_text("".join(f"{pattern}\n" for pattern in EXCLUDED))
        self._git("config", "core.bare", "false")
        self._git("add", "-A", "--force")
        self._git(*IDENTITY, "commit", "-q", "--allow-empty", "-m", "the pinned revision")

    def patch(self) -> str:
        """The diff of the work tree against the base, as ``git diff`` writes it (new files included)."""
        self._git("add", "-A")
        out = self._git("diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", "--no-color", "HEAD")
        return out.decode("utf-8", errors="replace")


def commit_for_agent(tree: Path) -> None:
    """``tree`` a git repository of its own, its one commit the tree as it is (for the agent's use)."""
    git(["init", "-q"], tree)
    git(["add", "-A", "--force"], tree)
    git([*IDENTITY, "commit", "-q", "--allow-empty", "-m", "the pinned revision"], tree)


class RepoEvaluateServer(EvaluateServer):
    """The workspace's ``evaluate`` for a task: the current patch of ``repo/``, judged by
    ``command(patch_file, flags)`` with the run's settings (visible tests only)."""

    def __init__(self, workspace: Path, patches: PatchRepo, command: Callable[[Path, list[str]], list[str]],
                 env: dict[str, str], hidden: HiddenText | None = None):
        self.patches, self.patch_command = patches, command
        self.hidden = hidden or HiddenText(())  # lines of the hidden files, withheld from what the agent reads
        super().__init__(workspace, "", lambda candidate, problem, flags: command(candidate, flags), env)

    def _answer(self, request: object) -> tuple[str, int]:
        if not isinstance(request, dict) or not isinstance(request.get("flags"), list) \
                or not all(f in FLAGS for f in request["flags"]):
            return "usage: ./evaluate [--json] [--no-timing]\n", 2
        try:
            text = self.patches.patch()
        except (GitError, OSError) as exc:
            return f"evaluate: the patch of repo/ could not be made: {exc}\n", 2
        if not text.strip():
            return "evaluate: repo/ is as the pinned revision: there is no change to judge\n", 2
        patch = self._private / f"patch-{self.calls + 1}.patch"
        patch.write_text(text)
        return self._run(patch, sorted(set(request["flags"])))

    def _run(self, patch: Path, flags: list[str]) -> tuple[str, int]:
        self.calls += 1
        with self._lock:
            if self._stop.is_set():
                return "evaluate: the agent's time is up\n", 2
            self._running = subprocess.Popen(self.patch_command(patch, flags), stdin=subprocess.DEVNULL,
                                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                              start_new_session=True, env=self.env, cwd=self._private)
        output, _ = self._running.communicate()
        code = self._running.returncode
        with self._lock:
            self._running = None
        return self.hidden.redact(output.decode("utf-8", errors="replace")[-100_000:]), code if code >= 0 else 1


class RepoCommandProvider(CommandProvider):
    """``command/<program>`` on repository tasks (module docstring); the Reply's ``solution`` is the patch."""

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "tools": {"evaluate": "./evaluate [--json] [--no-timing]: the diff of repo/ against the pinned revision "
                      f"judged with the visible tests and a timed workload run, the run's settings ({self.judge})"},
            "workspace": ["INSTRUCTIONS.md", "STATEMENT.md", "repo/ (a checkout of the pinned revision)", "evaluate"],
            "answer": "the diff of repo/ against the pinned revision, made by git outside the sandbox",
        }

    def instructions(self, prompt: str, previous_solution: str | None) -> str:
        note = (" with your previous patch applied (uncommitted), which the instructions discuss"
                if previous_solution is not None else "")
        return prompt + WORKSPACE_NOTE.format(previous_note=note, device=self.judge.device, size=self.judge.size,
                                              time_limit=self.time_limit)

    def evaluate_command(self, task: Task, patch: Path, flags: list[str]) -> list[str]:
        """The command the workspace's ``evaluate`` runs: ``kbench eval-patch`` of the visible tests and a
        timed workload run, with the run's settings; neither the hidden tests nor the expert's speedup
        (what the patch is measured against is not the agent's to see)."""
        j = self.judge
        return [sys.executable, "-m", "kbench", "eval-patch", str(patch), "--task", str(task.path), "--device",
                j.device, "--size", j.size, "--trials", str(j.trials), "--timeout", f"{j.timeout:g}", "--policy",
                j.policy, "--visible-only", "--no-expert", "--no-progress", *["--no-sandbox"] * (not j.sandbox),
                *flags]

    def generate(self, request: Request) -> Reply:
        task = request.task
        if task is None:
            return Reply(None, error="a repository agent was asked about no task", error_kind="internal")
        with tempfile.TemporaryDirectory(prefix="kbench-agent-") as scratch, \
                tempfile.TemporaryDirectory(prefix="kbench-agent-private-") as private:
            workspace, log_path = Path(scratch), Path(private) / "agent.log"
            try:
                patches, applied = self._prepare_repo(workspace, Path(private), request)
            except (TaskError, GitError, OSError) as exc:
                return Reply(None, error=f"the agent's workspace could not be made: {exc}", error_kind="agent")
            try:
                server = RepoEvaluateServer(workspace, patches, lambda p, f: self.evaluate_command(task, p, f),
                                            {**os.environ, **_absolute_pythonpath()},
                                            HiddenText.of(task, workspace / REPO))
            except OSError as exc:
                return Reply(None, error=f"the agent's evaluate tool could not start: {exc}", error_kind="agent")
            ran = self.run_agent(workspace, server, log_path)
            if isinstance(ran, Reply):
                return ran
            returncode, timed_out = ran
            output = _tail(log_path, AGENT_LOG_CHARS)
            usage, usage_errors = _read_usage(workspace)
            try:
                patch, failure = patches.patch(), None
            except (GitError, OSError) as exc:
                patch, failure = "", f"the patch of repo/ could not be made: {exc}"
            tool_calls = server.calls
        too_large = len(patch.encode()) > MAX_PATCH_BYTES
        details = {"returncode": returncode, "timed_out": timed_out, "tool_calls": tool_calls,
                   "previous_patch_applied": applied, "patch_bytes": len(patch.encode()),
                   "patch_failure": failure or (f"larger than {MAX_PATCH_BYTES} bytes" if too_large else None),
                   **({"usage_errors": usage_errors} if usage_errors else {})}
        return Reply(output, solution=patch if patch.strip() and not too_large else None, answer_in_text=False,
                     input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                     cost_usd=usage.get("cost_usd"), details=details)

    def _prepare_repo(self, workspace: Path, private: Path, request: Request) -> tuple[PatchRepo, bool | None]:
        """The workspace's files, ``repo/`` with its own git and the private base; whether the previous
        patch applied (None on a first turn)."""
        task: Task = request.task
        tree = clean_checkout(task.repository, workspace / REPO)
        commit_for_agent(tree)
        patches = PatchRepo(private, tree)
        patches.record_base()
        applied = None
        if request.previous_solution is not None:
            try:
                apply(Patch(request.previous_solution), tree)
                applied = True
            except PatchError:
                applied = False  # the repository stays at the pinned revision; the verdict said why
        (workspace / ".kbench").mkdir()
        (workspace / "STATEMENT.md").write_text(f"# {task.title}\n\n{task.statement.strip()}\n")
        (workspace / "INSTRUCTIONS.md").write_text(request.prompt)
        tool = workspace / "evaluate"
        tool.write_text(TOOL.format(python=sys.executable, socket=SOCKET))
        tool.chmod(0o755)
        return patches, applied


