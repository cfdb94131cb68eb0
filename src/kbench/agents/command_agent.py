"""The ``command/<program>`` provider: an external agent run in a workspace of its own.

The agent gets the rendered prompt and an ``evaluate`` tool that calls the
judge with the run's own settings (docs/agent.md); it leaves its solution in
the workspace, and what it printed and spent is kept with the turn.

An agent under optimisation pressure is an adversary of the harness, so it runs
in the judge's sandbox tool (kbench.judge.processes.sandbox): its workspace is the only
place it can write; the store, the caches, kbench's source, the problem files
and other runs' files are not mounted; a PID namespace of its own ends whatever
it started (``setsid`` included) when it ends; network and GPU as the run allows
(``AgentAccess``); an environment of named variables. Its ``evaluate`` tool is
answered outside (kbench.agents.evaluate_tool). Files it leaves are read without
following links.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kbench.agents.evaluate_tool import SOCKET, TOOL, EvaluateServer, read_plain_file
from kbench.agents.providers import ModelSpec, ProviderError, Reply, Request, int_or_none
from kbench.judge.processes.process import JUDGE_PYTHONPATH
from kbench.judge.processes.sandbox import (
    NO_SANDBOX, Sandbox, SandboxIdentity, candidate_env, find_sandbox, give_to_candidate,
)

DEFAULT_AGENT_TIME_LIMIT = 1800.0
VERSION_PROBE_SECONDS = 10
AGENT_LOG_CHARS = 20_000
MAX_SOLUTION_BYTES = 1_000_000
# What the command agent's workspace holds (docs/agent.md).
WORKSPACE_TOOLS = ("evaluate",)


@dataclass(frozen=True)
class JudgeSettings:
    """How the workspace's ``evaluate`` tool judges (the run's own settings)."""

    device: str
    size: str
    trials: int
    timeout: float
    policy: str
    cuda_graph: bool = False
    sandbox: bool = True
    dtype: str = "float32"
    precision: str | None = None  # KernelBench's cast of every problem (kbench.suite.kernelbench), instead of dtype


@dataclass(frozen=True)
class AgentAccess:
    """What the run lets its agent reach beyond its workspace: the network (an agent
    that calls a model's API needs it), the GPU (one that profiles its own kernels),
    and environment variables by name (an API key), added to the few every
    sandboxed process gets (PATH, LANG, CUDA_*, TRITON_*, ...)."""

    network: bool = False
    gpu: bool = False
    env: tuple[str, ...] = ()

    def environment(self, workspace: Path) -> dict[str, str]:
        """The variables the agent receives: never more than these names."""
        given = {name: os.environ[name] for name in self.env if name in os.environ}
        return {**candidate_env(dict(os.environ)), **given, "KBENCH_WORKSPACE": str(workspace)}


def resolve_command(program: str) -> list[str]:
    """The agent's command line with its program found on PATH and every argument that
    names an existing file made absolute (the agent runs in its own workspace)."""
    try:
        argv = shlex.split(program)
    except ValueError as exc:
        raise ProviderError(f"--model command/{program}: cannot be split into words ({exc})") from exc
    if not argv:
        raise ProviderError("--model command/: no program given")
    first = argv[0]
    # absolute, not resolved: a virtual environment's python is a symlink that must stay one
    found = os.path.abspath(first) if "/" in first else shutil.which(first)
    if found is None or not Path(found).is_file():
        raise ProviderError(f"--model command/{program}: no program {first!r} (not a file, not on PATH)")
    if not os.access(found, os.X_OK):
        raise ProviderError(f"--model command/{program}: {found} is not executable")
    rest = [os.path.abspath(a) if not a.startswith("-") and Path(a).is_file() else a for a in argv[1:]]
    return [found, *rest]


def file_hashes(argv: list[str]) -> dict[str, str]:
    """sha256 of each file the command line names (the program, a script it runs)."""
    hashes = {}
    for arg in argv:
        path = Path(arg)
        if path.is_absolute() and path.is_file():
            try:
                hashes[arg] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                pass
    return hashes


def probe_version(argv: list[str], confine=None) -> str | None:
    """First line of ``PROGRAM --version``, run in an empty scratch directory with a
    short time limit (``confine(argv, scratch)``: in the agent's sandbox); None if it
    fails (an agent that does not know the flag)."""
    with tempfile.TemporaryDirectory(prefix="kbench-version-") as scratch:
        command = [*argv, "--version"]
        if confine is not None:
            give_to_candidate(Path(scratch))
            command = confine(command, Path(scratch))
        try:
            done = subprocess.run(command, cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, errors="replace", timeout=VERSION_PROBE_SECONDS,
                                  start_new_session=True)
        except (OSError, subprocess.TimeoutExpired):
            return None
    lines = done.stdout.strip().splitlines()
    return lines[0][:200] if done.returncode == 0 and lines else None


WORKSPACE_NOTE = """

## Your workspace

You are working in a directory of your own. It holds:

- `problem.py`: the problem above (the reference `Model`, `get_inputs`, `get_init_inputs`);
- `solution.py`: {solution_note};
- `evaluate`: a tool that judges a candidate as the benchmark will, on this machine's
  device ({device}, size {size}): run `./evaluate` (or `./evaluate other.py`; add `--json`
  for the verdict as JSON, `--no-timing` to check correctness only, quicker). It prints
  the verdict: status, reason, errors, speedup.

Instead of replying with a code block, write your complete answer to `solution.py`.
When you stop, or after {time_limit:g} seconds, `solution.py` as it stands is your answer.
"""

class CommandProvider:
    """An external agent: for each request, a fresh workspace with the problem,
    instructions (the rendered prompt and a note on the workspace) and the
    ``evaluate`` tool; the program runs there (stdin closed, its own process
    group, in its sandbox unless the run says ``--no-sandbox``, killed at the time
    limit) and ``solution.py`` is collected. The agent may leave ``usage.json``
    (``input_tokens``, ``output_tokens``, ``cost_usd``) for its token counts and
    cost. SandboxUnavailable when the run wants a sandbox and none works here."""

    def __init__(self, program: str, *, judge: JudgeSettings, time_limit: float = DEFAULT_AGENT_TIME_LIMIT,
                 version: str | None = None, access: AgentAccess = AgentAccess()):
        self.argv = resolve_command(program)
        self.spec = ModelSpec("command", shlex.join(self.argv))
        self.endpoint = None
        self.sampling = None
        self.judge, self.time_limit, self.access = judge, time_limit, access
        self.sandbox: Sandbox | None = find_sandbox() if judge.sandbox else None
        self.files = file_hashes(self.argv)
        self.version = version if version is not None else probe_version(self.argv, self._confine)
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._closed = False

    def settings(self) -> dict[str, Any]:
        """What defines the agent (part of the run's config: another agent is another run)."""
        return {"argv": self.argv, "files_sha256": self.files, "version": self.version,
                "time_limit_s": self.time_limit, "network": self.access.network, "gpu": self.access.gpu,
                "env": list(self.access.env)}

    def describe(self) -> dict[str, Any]:
        return {
            "provider": "command",
            "model": self.spec.name,
            "endpoint": None,
            **self.settings(),
            "tools": {"evaluate": "./evaluate [FILE] [--json] [--no-timing]: kbench eval of FILE against "
                      f"problem.py with the run's settings ({asdict(self.judge)})"},
            "workspace": ["INSTRUCTIONS.md", "problem.py", "solution.py", "evaluate"],
            "stdin": "closed",
            "sandbox": self._sandbox_record(),
            "environment": sorted(self.access.environment(Path("/workspace"))),
        }

    def _sandbox_record(self) -> dict[str, Any]:
        """How the agent is confined, for the manifest (its network and GPU included)."""
        if self.sandbox is None:
            return {**NO_SANDBOX, "network": True, "gpu": True}
        record = self.sandbox.describe()
        namespaces = [n for n in record["namespaces"] if n != "network" or not self.access.network]
        return {**record, "namespaces": namespaces, "writable": "its workspace only",
                "network": self.access.network, "gpu": self.access.gpu}

    def _confine(self, argv: list[str], workspace: Path, identity: SandboxIdentity | None = None) -> list[str]:
        """``argv`` in the agent's sandbox, its workspace the one place it writes (as ``identity``'s uid,
        one of its own: no agent can use up another's processes); as it is without one."""
        if self.sandbox is None:
            return argv
        readable = [Path(a) for a in self.argv if Path(a).is_absolute() and Path(a).exists()]
        return self.sandbox.wrap(argv, scratch=workspace, readable=readable, network=self.access.network,
                                 gpu=self.access.gpu, env=self.access.environment(workspace), filter_env=False,
                                 hostname="kbench-agent", **({"uid": identity.uid} if identity else {}))

    def _evaluate_command(self, candidate: Path, problem: Path, flags: list[str]) -> list[str]:
        """``kbench eval`` with the run's settings, as the ``evaluate`` tool asks for it."""
        j = self.judge
        return [sys.executable, "-m", "kbench", "eval", str(candidate), "--problem", str(problem), "--device",
                j.device, "--size", j.size, "--trials", str(j.trials), "--timeout", f"{j.timeout:g}", "--policy",
                j.policy, *["--cuda-graph"] * j.cuda_graph, *["--no-sandbox"] * (not j.sandbox),
                *(["--precision", j.precision] if j.precision else ["--dtype", j.dtype]), *flags]

    def generate(self, request: Request) -> Reply:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="kbench-agent-") as scratch, \
                tempfile.TemporaryDirectory(prefix="kbench-agent-log-") as private:
            workspace = Path(scratch)
            self._prepare(workspace, request)
            log_path = Path(private) / "agent.log"  # outside the workspace: the agent cannot swap it for a link
            try:
                server = EvaluateServer(workspace, request.problem_source, self._evaluate_command,
                                        {**os.environ, **_absolute_pythonpath()})
            except OSError as exc:
                return Reply(None, error=f"the agent's evaluate tool could not start: {exc}", error_kind="agent")
            ran = self.run_agent(workspace, server, log_path)
            if isinstance(ran, Reply):
                return ran
            returncode, timed_out = ran
            output = _tail(log_path, AGENT_LOG_CHARS)
            solution = _read_solution(workspace)
            usage, usage_errors = _read_usage(workspace)
            tool_calls = server.calls
        details = {
            "returncode": returncode,
            "timed_out": timed_out,
            "seconds": round(time.monotonic() - started, 3),
            "tool_calls": tool_calls,
            "solution_written": solution is not None,
            **({"usage_errors": usage_errors} if usage_errors else {}),
        }
        return Reply(
            output,
            solution=solution if solution else None,
            answer_in_text=False,
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            cost_usd=usage.get("cost_usd"),
            details=details,
        )

    def run_agent(self, workspace: Path, server: Any, log_path: Path) -> tuple[int | None, bool] | Reply:
        """Run the program in ``workspace`` (its sandbox's one writable place) until it ends or its
        time is up, its output into ``log_path``; its exit status and whether it timed out, or a
        Reply saying why it could not start. ``server`` (its evaluate tool) is closed after. As root
        it runs as a uid of its own (kbench.judge.processes.sandbox.SandboxIdentity), given back after."""
        identity = SandboxIdentity() if self.sandbox is not None else None
        try:
            return self._run_as(identity, workspace, server, log_path)
        finally:
            if identity is not None:
                identity.release()

    def _run_as(self, identity: SandboxIdentity | None, workspace: Path, server: Any,
                log_path: Path) -> tuple[int | None, bool] | Reply:
        timed_out, returncode = False, None
        give_to_candidate(workspace, uid=identity.uid if identity else None)
        environment = {**self.access.environment(workspace), "HOME": str(workspace)}
        with open(log_path, "wb") as log:
            try:
                process = subprocess.Popen(
                    self._confine(self.argv, workspace, identity), cwd=workspace, stdin=subprocess.DEVNULL,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=environment,
                )
            except OSError as exc:
                server.close()
                return Reply(None, error=f"the agent could not start: {exc}", error_kind="agent")
            with self._lock:
                if self._closed:
                    _kill_group(process)
                self._running.add(process)
            try:
                returncode = process.wait(timeout=self.time_limit)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(process)
                returncode = process.wait()
            finally:
                _kill_group(process)  # whatever it left running in its group (its sandbox ends the rest)
                server.close()
                with self._lock:
                    self._running.discard(process)
        return returncode, timed_out

    def _prepare(self, workspace: Path, request: Request) -> None:
        (workspace / ".kbench").mkdir()
        (workspace / "problem.py").write_text(request.problem_source)
        if request.previous_solution is not None:
            (workspace / "solution.py").write_text(request.previous_solution)
        (workspace / "INSTRUCTIONS.md").write_text(request.prompt)
        tool = workspace / "evaluate"
        tool.write_text(TOOL.format(python=sys.executable, socket=SOCKET))
        tool.chmod(0o755)

    def instructions(self, prompt: str, previous_solution: str | None) -> str:
        """The prompt as the agent reads it: the template's text and a note on the workspace."""
        note = ("your previous solution, which the instructions discuss; improve it in place"
                if previous_solution is not None else "not there yet: you write it")
        return prompt + WORKSPACE_NOTE.format(solution_note=note, device=self.judge.device, size=self.judge.size,
                                              time_limit=self.time_limit)

    def close(self) -> None:
        """Stop every agent still running (an interrupted run)."""
        with self._lock:
            self._closed = True
            running = list(self._running)
        for process in running:
            _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path, chars: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - chars))
            text = f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return ("[... earlier output cut ...]\n" + text) if size > chars else text


def _read_solution(workspace: Path) -> str | None:
    data = read_plain_file(workspace, "solution.py", MAX_SOLUTION_BYTES)
    return data.decode("utf-8", errors="replace") if data is not None else None


# The largest count or cost usage.json may give: what SQLite's 64-bit integers hold. An integer past it
# stopped the run's store write (issue 57); one past any float stopped ``float()``.
MAX_USAGE = 2**63 - 1


def _read_usage(workspace: Path) -> tuple[dict[str, Any], list[str]]:
    """The agent's own account of tokens and cost, and what of it was ignored and why: a count that
    is not a whole number from 0 to MAX_USAGE, a cost that is not a finite number from 0 to
    MAX_USAGE, a file that is no JSON object. The agent writes this file: nothing in it can stop
    the run."""
    raw = read_plain_file(workspace, "usage.json", 100_000)
    if not raw:  # none left: the agent gives no account
        return {}, []
    try:
        data = json.loads(raw)
    except ValueError as exc:  # no JSON, or digits past the parser's limit
        return {}, [f"usage.json ignored: {str(exc)[:200]}"]
    except RecursionError:
        return {}, ["usage.json ignored: nested too deep"]
    if not isinstance(data, dict):
        return {}, ["usage.json ignored: not a JSON object"]
    usage: dict[str, Any] = {}
    errors: list[str] = []
    for key in ("input_tokens", "output_tokens"):
        if key not in data:
            continue
        value = int_or_none(data[key])
        if value is not None and 0 <= value <= MAX_USAGE:
            usage[key] = value
        else:
            errors.append(f"usage.json: {key} ignored: {_shown(data[key])} is not a count from 0 to {MAX_USAGE}")
    if "cost_usd" in data:
        cost = data["cost_usd"]
        number = isinstance(cost, (int, float)) and not isinstance(cost, bool)
        if number and (cost <= MAX_USAGE if isinstance(cost, int) else math.isfinite(cost)) and 0 <= cost <= MAX_USAGE:
            usage["cost_usd"] = float(cost)
        else:
            errors.append(f"usage.json: cost_usd ignored: {_shown(cost)} is not a cost from 0 to {MAX_USAGE}")
    return usage, errors


def _shown(value: Any) -> str:
    """A value from usage.json as an error names it, never long (an integer of a million digits)."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _absolute_pythonpath() -> dict[str, str]:
    """The agent works in its workspace: a relative PYTHONPATH would point into it."""
    return {"PYTHONPATH": os.pathsep.join(JUDGE_PYTHONPATH)} if JUDGE_PYTHONPATH else {}
