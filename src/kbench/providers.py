"""Providers: where solutions come from, chosen with ``--model PROVIDER/MODEL``.

- ``openai/<model>``: the official ``openai`` client, against OpenAI or any
  OpenAI-compatible server (``--base-url``: vLLM, SGLang, Ollama, gateways);
- ``anthropic/<model>``: the official ``anthropic`` client;
- ``command/<program>``: an external agent run in a workspace of its own
  (:class:`CommandProvider`);
- ``replay/<dir>``: files already on disk (kbench.runner's replay source; it
  asks no one, so it has no provider object here).

A provider turns one :class:`Request` (a rendered prompt) into one
:class:`Reply`. Failures of a request (timeouts, rate limits and server errors
past the client's own retries) come back as a Reply with ``error`` set, to be
recorded and asked again on resumption; only what no retry can mend (a refused
key, an unknown model, a missing package) raises :class:`ProviderError` and
stops the run. Retries with exponential backoff and ``Retry-After`` are the
client libraries' own, not ours.

``openai`` and ``anthropic`` are imported only when such a provider is made:
the evaluation side of kbench runs on GPU machines that have neither.
API keys come from the environment or a ``.env`` file and are never stored.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kbench.manifest import package_version

PROVIDERS = ("openai", "anthropic", "command", "replay")
GENERATING = ("openai", "anthropic", "command")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_REQUEST_TIMEOUT = 600.0
DEFAULT_MAX_RETRIES = 5
DEFAULT_ANTHROPIC_MAX_TOKENS = 8192  # the Messages API needs a number
DEFAULT_AGENT_TIME_LIMIT = 1800.0
VERSION_PROBE_SECONDS = 10
ERROR_CHARS = 2000
AGENT_LOG_CHARS = 20_000
MAX_SOLUTION_BYTES = 1_000_000
# What the command agent's workspace holds (docs/agent.md).
WORKSPACE_TOOLS = ("evaluate",)


class ProviderError(Exception):
    """A provider that cannot be used as asked: a malformed ``--model``, a missing
    package or key, or a server that refuses the key or does not know the model."""


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"


def parse_model(text: str) -> ModelSpec:
    """``PROVIDER/MODEL``, split at the first slash (model names may hold more:
    ``openai/Qwen/Qwen2.5-Coder-32B``)."""
    provider, slash, name = text.strip().partition("/")
    if not slash or not provider:
        raise ProviderError(
            f"--model {text!r}: expected PROVIDER/MODEL with PROVIDER one of {', '.join(PROVIDERS)} "
            "(for example openai/gpt-4o, anthropic/claude-sonnet-4-20250514, command/./agent.sh, replay/DIR)"
        )
    if provider not in PROVIDERS:
        raise ProviderError(f"--model {text!r}: unknown provider {provider!r}; known: {', '.join(PROVIDERS)}")
    if not name.strip():
        raise ProviderError(f"--model {text!r}: the model (or program, or directory) after {provider}/ is empty")
    return ModelSpec(provider, name.strip())


@dataclass(frozen=True)
class Sampling:
    """Sampling settings sent with each request; None leaves the server's default."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Request:
    """One question to a model: a rendered prompt, and what it is about."""

    prompt: str
    problem_id: str
    problem_source: str
    sample_index: int
    turn: int
    previous_solution: str | None = None


@dataclass(frozen=True)
class Reply:
    """A model's answer, or why there is none (``error``; ``error_kind`` one of
    ``timeout``, ``rate_limit``, ``server``, ``connection``, ``request``, ``response``,
    ``agent``, ``internal``). Providers that hand back a file rather than text to
    extract a solution from (the command agent's ``solution.py``) set ``solution``
    (None: no file) and ``answer_in_text`` False (``text`` is then the agent's log)."""

    text: str | None
    solution: str | None = None
    answer_in_text: bool = True
    error: str | None = None
    error_kind: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


class Provider(Protocol):
    spec: ModelSpec
    endpoint: str | None
    sampling: Sampling | None  # None where there is nothing to sample (an external agent)

    def settings(self) -> dict[str, Any] | None:
        """What else defines the experiment (the external agent's program, version, time
        limit); part of the run's config."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the manifest records about this provider (never a key)."""
        ...

    def instructions(self, prompt: str, previous_solution: str | None) -> str:
        """The rendered prompt as this provider's model will read it (stored with the turn)."""
        ...

    def generate(self, request: Request) -> Reply:
        """The reply to one request; a failed request is a Reply with ``error``. Called
        from several threads at once."""
        ...

    def close(self) -> None: ...


# --- keys ----------------------------------------------------------------


def read_env_file(path: str | Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of a ``.env`` file (``export`` prefixes, quotes and ``#``
    comments allowed); an absent file is empty."""
    path = Path(path)
    if not path.is_file():
        return {}
    values: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProviderError(f"{path}: cannot be read ({exc})") from exc
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key.strip()] = value
    return values


def api_key(variable: str, env_file: str | Path | None = ".env") -> str | None:
    """The key in environment variable ``variable``, else in the ``.env`` file."""
    value = os.environ.get(variable)
    if not value and env_file is not None:
        value = read_env_file(env_file).get(variable)
    return value or None


# --- the official clients -------------------------------------------------


def _client_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ProviderError(
            f"--model {name}/...: needs the {name} package (pip install 'kbench[models]'); {exc}"
        ) from exc


def _short(text: str, limit: int = ERROR_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " [...]"


class _ClientProvider:
    """What the OpenAI and Anthropic providers share: making the client, and sorting its errors."""

    package: str = ""  # the client library, also the provider's name
    client_class: str = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        key: str | None = None,
        key_env: str | None = None,
        env_file: str | Path | None = ".env",
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        sampling: Sampling = Sampling(),
    ):
        self.spec = ModelSpec(self.package, model)
        self.module = _client_module(self.package)
        self.key_env = key_env or DEFAULT_KEY_ENV[self.package]
        key = key or api_key(self.key_env, env_file)
        if key is None:
            if base_url is None:
                raise ProviderError(
                    f"--model {self.spec}: no API key: set {self.key_env} in the environment or in a .env file"
                )
            key = "unused"  # a local OpenAI-compatible server often needs none
        self.timeout, self.max_retries, self.sampling = timeout, max_retries, sampling
        self.client = self._make_client(key, base_url)
        self.endpoint = str(self.client.base_url)

    def _make_client(self, key: str, base_url: str | None) -> Any:
        client = getattr(self.module, self.client_class)
        return client(api_key=key, base_url=base_url, timeout=self.timeout, max_retries=self.max_retries)

    def instructions(self, prompt: str, previous_solution: str | None) -> str:
        return prompt

    def settings(self) -> dict[str, Any] | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {
            "provider": self.spec.provider,
            "model": self.spec.name,
            "endpoint": self.endpoint,
            "client": {"package": self.package, "version": package_version(self.package)},
            "api_key_env": self.key_env,
            "sampling": self.sampling.to_dict(),
            "request_timeout_s": self.timeout,
            "max_retries": self.max_retries,
            "retry_policy": f"the {self.package} client's own: exponential backoff with jitter, honouring "
            "Retry-After, on connection errors, timeouts, 408, 409, 429 and 5xx",
        }

    def close(self) -> None:
        self.client.close()

    def _failure(self, exc: Exception, started: float) -> Reply:
        """A Reply for a request that failed past its retries; raises for what no retry mends."""
        m = self.module
        status = getattr(exc, "status_code", None)
        message = _short(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, (m.AuthenticationError, m.PermissionDeniedError)):
            raise ProviderError(f"{self.spec} at {self.endpoint} refused the API key ({self.key_env}): {message}") from exc
        if isinstance(exc, m.NotFoundError):
            raise ProviderError(f"{self.spec} at {self.endpoint}: not found ({message}); check the model and --base-url") from exc
        if isinstance(exc, m.APITimeoutError):
            kind, message = "timeout", f"no answer within {self.timeout:g} s ({self.max_retries} retries): {message}"
        elif isinstance(exc, m.RateLimitError):
            kind = "rate_limit"
        elif isinstance(exc, m.APIStatusError):
            kind = "server" if status is not None and status >= 500 else "request"
        elif isinstance(exc, m.APIConnectionError):
            kind = "connection"
        else:
            kind = "response"  # an answer the client could not read
        return Reply(None, error=message, error_kind=kind,
                     details={"status_code": status, "seconds": round(time.monotonic() - started, 3)})


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _request_id(raw: Any) -> str | None:
    headers = getattr(raw, "headers", None) or {}
    return headers.get("x-request-id") or headers.get("request-id")


class OpenAIProvider(_ClientProvider):
    """Chat completions: one user message per request (each turn's prompt carries what it needs)."""

    package = "openai"
    client_class = "OpenAI"

    def generate(self, request: Request) -> Reply:
        s = self.sampling
        options = {"temperature": s.temperature, "top_p": s.top_p, "max_tokens": s.max_tokens, "seed": s.seed}
        started = time.monotonic()
        try:
            raw = self.client.chat.completions.with_raw_response.create(
                model=self.spec.name,
                messages=[{"role": "user", "content": request.prompt}],
                **{k: v for k, v in options.items() if v is not None},
            )
            completion = raw.parse()
            choice = completion.choices[0] if completion.choices else None
            text = (choice.message.content if choice is not None and choice.message is not None else None) or ""
        except (self.module.APIError, ValueError) as exc:  # an unreadable answer is one too
            return self._failure(exc, started)
        usage = getattr(completion, "usage", None)
        return Reply(
            text,
            input_tokens=_int_or_none(getattr(usage, "prompt_tokens", None)),
            output_tokens=_int_or_none(getattr(usage, "completion_tokens", None)),
            details={
                "model": getattr(completion, "model", None),
                "finish_reason": getattr(choice, "finish_reason", None),
                "request_id": _request_id(raw),
                "retries": getattr(raw, "retries_taken", None),
                "seconds": round(time.monotonic() - started, 3),
            },
        )


class AnthropicProvider(_ClientProvider):
    """The Messages API: one user message per request; the reply is its text blocks joined.
    Temperature and top_p go in the request body as the API takes them (recent clients no
    longer name them as arguments)."""

    package = "anthropic"
    client_class = "Anthropic"

    def generate(self, request: Request) -> Reply:
        s = self.sampling
        options = {"temperature": s.temperature, "top_p": s.top_p}
        started = time.monotonic()
        try:
            raw = self.client.messages.with_raw_response.create(
                model=self.spec.name,
                max_tokens=s.max_tokens or DEFAULT_ANTHROPIC_MAX_TOKENS,
                messages=[{"role": "user", "content": request.prompt}],
                extra_body={k: v for k, v in options.items() if v is not None} or None,
            )
            message = raw.parse()
            text = "".join(getattr(b, "text", "") for b in message.content or [] if getattr(b, "type", "") == "text")
        except (self.module.APIError, ValueError) as exc:
            return self._failure(exc, started)
        usage = getattr(message, "usage", None)
        return Reply(
            text,
            input_tokens=_int_or_none(getattr(usage, "input_tokens", None)),
            output_tokens=_int_or_none(getattr(usage, "output_tokens", None)),
            details={
                "model": getattr(message, "model", None),
                "finish_reason": getattr(message, "stop_reason", None),
                "request_id": _request_id(raw),
                "retries": getattr(raw, "retries_taken", None),
                "seconds": round(time.monotonic() - started, 3),
            },
        )


# --- the external agent ---------------------------------------------------


@dataclass(frozen=True)
class JudgeSettings:
    """How the workspace's ``evaluate`` tool judges (the run's own settings)."""

    device: str
    size: str
    trials: int
    timeout: float
    policy: str
    cuda_graph: bool = False


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


def probe_version(argv: list[str]) -> str | None:
    """First line of ``PROGRAM --version``, run in an empty scratch directory with a
    short time limit; None if it fails (an agent that does not know the flag)."""
    with tempfile.TemporaryDirectory(prefix="kbench-version-") as scratch:
        try:
            done = subprocess.run([*argv, "--version"], cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, errors="replace", timeout=VERSION_PROBE_SECONDS)
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

EVALUATE_TOOL = """#!{python}
\"\"\"Judge a candidate for this workspace's problem:
./evaluate [FILE] [--json] [--no-timing]  (FILE: solution.py by default; --no-timing: correctness only, quicker)\"\"\"
import pathlib
import subprocess
import sys
import time

here = pathlib.Path(__file__).resolve().parent
flags = [a for a in sys.argv[1:] if a in ("--json", "--no-timing")]
files = [a for a in sys.argv[1:] if not a.startswith("-")]
target = files[0] if files else str(here / "solution.py")
command = [{python!r}, "-m", "kbench", "eval", target, "--problem", str(here / "problem.py"),
           "--device", {device!r}, "--size", {size!r}, "--trials", {trials!r}, "--timeout", {timeout!r},
           "--policy", {policy!r}, *{graph_flags!r}, *flags]
with open(here / ".kbench" / "tool_calls.log", "a") as log:
    log.write(f"{{time.time():.3f}} evaluate {{target}}\\n")
sys.exit(subprocess.call(command))
"""


class CommandProvider:
    """An external agent: for each request, a fresh workspace with the problem,
    instructions (the rendered prompt and a note on the workspace) and the
    ``evaluate`` tool; the program runs there (stdin closed, its own process
    group, killed at the time limit) and ``solution.py`` is collected. The agent
    may leave ``usage.json`` (``input_tokens``, ``output_tokens``, ``cost_usd``)
    for its token counts and cost."""

    def __init__(self, program: str, *, judge: JudgeSettings, time_limit: float = DEFAULT_AGENT_TIME_LIMIT,
                 version: str | None = None):
        self.argv = resolve_command(program)
        self.spec = ModelSpec("command", shlex.join(self.argv))
        self.endpoint = None
        self.sampling = None
        self.judge, self.time_limit = judge, time_limit
        self.files = file_hashes(self.argv)
        self.version = version if version is not None else probe_version(self.argv)
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self._closed = False

    def settings(self) -> dict[str, Any]:
        """What defines the agent (part of the run's config: another agent is another run)."""
        return {"argv": self.argv, "files_sha256": self.files, "version": self.version,
                "time_limit_s": self.time_limit}

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
        }

    def generate(self, request: Request) -> Reply:
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="kbench-agent-") as scratch:
            workspace = Path(scratch)
            self._prepare(workspace, request)
            log_path = workspace / ".kbench" / "agent.log"
            timed_out, returncode = False, None
            with open(log_path, "wb") as log:
                try:
                    process = subprocess.Popen(
                        self.argv, cwd=workspace, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                        start_new_session=True, env={**os.environ, "KBENCH_WORKSPACE": str(workspace)},
                    )
                except OSError as exc:
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
                    _kill_group(process)  # whatever it left running in its group
                    with self._lock:
                        self._running.discard(process)
            output = _tail(log_path, AGENT_LOG_CHARS)
            solution = _read_solution(workspace / "solution.py")
            usage = _read_usage(workspace / "usage.json")
            tool_calls = _count_lines(workspace / ".kbench" / "tool_calls.log")
        details = {
            "returncode": returncode,
            "timed_out": timed_out,
            "seconds": round(time.monotonic() - started, 3),
            "tool_calls": tool_calls,
            "solution_written": solution is not None,
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

    def _prepare(self, workspace: Path, request: Request) -> None:
        (workspace / ".kbench").mkdir()
        (workspace / "problem.py").write_text(request.problem_source)
        if request.previous_solution is not None:
            (workspace / "solution.py").write_text(request.previous_solution)
        (workspace / "INSTRUCTIONS.md").write_text(request.prompt)
        tool = workspace / "evaluate"
        j = self.judge
        tool.write_text(EVALUATE_TOOL.format(python=sys.executable, device=j.device, size=j.size,
                                             trials=str(j.trials), timeout=f"{j.timeout:g}", policy=j.policy,
                                             graph_flags=["--cuda-graph"] if j.cuda_graph else []))
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


def _read_solution(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_SOLUTION_BYTES:
            return None
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None


def _read_usage(path: Path) -> dict[str, Any]:
    """The agent's own account of tokens and cost; anything malformed is ignored."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    usage: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens"):
        if _int_or_none(data.get(key)) is not None and data[key] >= 0:
            usage[key] = data[key]
    cost = data.get("cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        usage["cost_usd"] = float(cost)
    return usage


def _count_lines(path: Path) -> int:
    try:
        return len(path.read_text().splitlines())
    except OSError:
        return 0
