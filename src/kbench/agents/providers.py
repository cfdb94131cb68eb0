"""Providers: where solutions come from, chosen with ``--model PROVIDER/MODEL``.

- ``openai/<model>``: the official ``openai`` client, against OpenAI or any
  OpenAI-compatible server (``--base-url``: vLLM, SGLang, Ollama, gateways);
- ``anthropic/<model>``: the official ``anthropic`` client;
- ``command/<program>``: an external agent run in a workspace of its own
  (kbench.agents.command_agent);
- ``replay/<dir>``: files already on disk (kbench.runs.runner's replay source; it
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

import importlib
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kbench.core.versions import package_version

PROVIDERS = ("openai", "anthropic", "command", "replay")
GENERATING = ("openai", "anthropic", "command")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_REQUEST_TIMEOUT = 600.0
DEFAULT_MAX_RETRIES = 5
DEFAULT_ANTHROPIC_MAX_TOKENS = 8192  # the Messages API needs a number
ERROR_CHARS = 2000


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


LATER_SETTINGS = ("reasoning_effort", "options")


@dataclass(frozen=True)
class Sampling:
    """What each request asks of the model besides the prompt, sent exactly as set (None
    leaves the server's default). They change what a model writes, so they are part of a
    run's config and of what ``kbench compare`` checks. ``options``: any other fields of
    the request body (provider-specific, e.g. Anthropic's ``thinking``), sent as given."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    reasoning_effort: str | None = None  # OpenAI's reasoning models: minimal, low, medium, high
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain values; settings added after runs were stored are left out while unset, so
        that those runs' stored settings still compare equal when they resume."""
        data = asdict(self)
        return {k: v for k, v in data.items() if k not in LATER_SETTINGS or v}

    def given(self, *names: str) -> dict[str, Any]:
        """The named settings that are set."""
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


@dataclass(frozen=True)
class Request:
    """One question to a model: a rendered prompt, and what it is about."""

    prompt: str
    problem_id: str
    problem_source: str
    sample_index: int
    turn: int
    previous_solution: str | None = None
    task: Any = None  # the repository track: the kbench.repo Task asked about (its patch is the answer)


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


def shorten(text: str, limit: int = ERROR_CHARS) -> str:
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
        message = shorten(f"{type(exc).__name__}: {exc}")
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


def int_or_none(value: Any) -> int | None:
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
        started = time.monotonic()
        try:
            raw = self.client.chat.completions.with_raw_response.create(
                model=self.spec.name,
                messages=[{"role": "user", "content": request.prompt}],
                **s.given("temperature", "top_p", "max_tokens", "seed", "reasoning_effort"),
                extra_body=s.options or None,
            )
            completion = raw.parse()
            choice = completion.choices[0] if completion.choices else None
            text = (choice.message.content if choice is not None and choice.message is not None else None) or ""
        except (self.module.APIError, ValueError) as exc:  # an unreadable answer is one too
            return self._failure(exc, started)
        usage = getattr(completion, "usage", None)
        return Reply(
            text,
            input_tokens=int_or_none(getattr(usage, "prompt_tokens", None)),
            output_tokens=int_or_none(getattr(usage, "completion_tokens", None)),
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
    longer name them as arguments). The API has no seed and no reasoning effort (its
    extended thinking is an option: ``{"thinking": {...}}``): setting them is refused, not
    dropped, since a run must send what it records."""

    package = "anthropic"
    client_class = "Anthropic"
    unsupported = ("seed", "reasoning_effort")

    def __init__(self, model: str, **kwargs: Any):
        refused = (kwargs.get("sampling") or Sampling()).given(*self.unsupported)
        if refused:
            raise ProviderError(f"anthropic/{model}: the Messages API takes no {' and no '.join(refused)}; "
                                'for extended thinking pass the option thinking={"type": "enabled", ...}')
        super().__init__(model, **kwargs)

    def generate(self, request: Request) -> Reply:
        s = self.sampling
        started = time.monotonic()
        try:
            raw = self.client.messages.with_raw_response.create(
                model=self.spec.name,
                max_tokens=s.max_tokens or DEFAULT_ANTHROPIC_MAX_TOKENS,
                messages=[{"role": "user", "content": request.prompt}],
                extra_body={**s.given("temperature", "top_p"), **s.options} or None,
            )
            message = raw.parse()
            text = "".join(getattr(b, "text", "") for b in message.content or [] if getattr(b, "type", "") == "text")
        except (self.module.APIError, ValueError) as exc:
            return self._failure(exc, started)
        usage = getattr(message, "usage", None)
        return Reply(
            text,
            input_tokens=int_or_none(getattr(usage, "input_tokens", None)),
            output_tokens=int_or_none(getattr(usage, "output_tokens", None)),
            details={
                "model": getattr(message, "model", None),
                "finish_reason": getattr(message, "stop_reason", None),
                "request_id": _request_id(raw),
                "retries": getattr(raw, "retries_taken", None),
                "seconds": round(time.monotonic() - started, 3),
            },
        )
