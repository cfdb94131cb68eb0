"""Providers against a model server on loopback (real HTTP), the command agent, keys and prices."""

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from model_server import Answer, code_reply, fake_code

from kbench.agents import prices, providers
from kbench.agents.command_agent import CommandProvider, JudgeSettings
from kbench.agents.providers import AnthropicProvider, OpenAIProvider, ProviderError, Request, Sampling, parse_model

REQUEST = Request("Write ModelNew.", "level1/p1", "# the problem\n", 0, 1)
JUDGE = JudgeSettings(device="cpu", size="small", trials=2, timeout=60.0, policy="strict")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def openai(server, **options):
    settings = dict(base_url=server.url, env_file=None, timeout=10.0, max_retries=2) | options
    return OpenAIProvider("test-model", **settings)


@pytest.mark.parametrize("text, spec", [
    ("openai/gpt-4o", ("openai", "gpt-4o")),
    ("openai/Qwen/Qwen2.5-Coder-32B-Instruct", ("openai", "Qwen/Qwen2.5-Coder-32B-Instruct")),
    ("anthropic/claude-sonnet-4-20250514", ("anthropic", "claude-sonnet-4-20250514")),
    ("command/python3 agent.py --fast", ("command", "python3 agent.py --fast")),
    ("replay/runs/gpt", ("replay", "runs/gpt")),
])
def test_model_specs(text, spec):
    parsed = parse_model(text)
    assert (parsed.provider, parsed.name) == spec and str(parsed) == text


@pytest.mark.parametrize("text, message", [
    ("gpt-4o", "expected PROVIDER/MODEL"),
    ("/gpt-4o", "expected PROVIDER/MODEL"),
    ("azure/gpt-4o", "unknown provider 'azure'"),
    ("openai/  ", "is empty"),
])
def test_malformed_model_specs_are_named(text, message):
    with pytest.raises(ProviderError, match=message):
        parse_model(text)


def test_a_reply_with_its_tokens_and_what_was_sent(serve):
    server = serve(lambda seen, n: Answer(code_reply(fake_code("correct 2.0")), prompt_tokens=1200,
                                          completion_tokens=340))
    provider = openai(server, sampling=Sampling(temperature=0.2, max_tokens=4000, seed=7, reasoning_effort="high",
                                                options={"service_tier": "flex"}))
    reply = provider.generate(REQUEST)
    assert reply.ok and "class ModelNew" in reply.text
    assert (reply.input_tokens, reply.output_tokens) == (1200, 340)
    assert reply.details["finish_reason"] == "stop" and reply.details["retries"] == 0
    assert reply.details["request_id"] == "req-test"
    body = server.seen[0].body
    assert body["model"] == "test-model" and body["messages"] == [{"role": "user", "content": "Write ModelNew."}]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 4000, 7) and "top_p" not in body
    assert (body["reasoning_effort"], body["service_tier"]) == ("high", "flex")
    described = provider.describe()
    assert described["endpoint"].startswith(server.url) and described["client"]["package"] == "openai"
    assert described["sampling"]["temperature"] == 0.2


def test_a_rate_limit_is_retried_with_backoff_then_answered(serve):
    def respond(seen, n):
        if n == 0:
            return Answer("slow down", status=429, headers={"retry-after-ms": "20"})
        return code_reply(fake_code("correct 1.0"))

    server = serve(respond)
    reply = openai(server).generate(REQUEST)
    assert reply.ok and reply.details["retries"] == 1 and len(server.seen) == 2


def test_server_errors_past_the_retries_are_a_failed_request(serve):
    server = serve(lambda seen, n: Answer("overloaded", status=503, headers={"retry-after-ms": "10"}))
    reply = openai(server, max_retries=2).generate(REQUEST)
    assert not reply.ok and reply.error_kind == "server" and "overloaded" in reply.error
    assert len(server.seen) == 3  # the first try and two retries


def test_a_request_that_takes_too_long_times_out(serve):
    server = serve(lambda seen, n: Answer(code_reply(fake_code("correct 1.0")), delay=3.0))
    started = time.monotonic()
    reply = openai(server, timeout=0.5, max_retries=0).generate(REQUEST)
    assert not reply.ok and reply.error_kind == "timeout" and "0.5 s" in reply.error
    assert time.monotonic() - started < 2.5


def test_a_refused_key_or_an_unknown_model_stops_the_run(serve):
    server = serve(lambda seen, n: Answer("bad key", status=401) if n == 0 else Answer("no such model", status=404))
    provider = openai(server)
    with pytest.raises(ProviderError, match="refused the API key"):
        provider.generate(REQUEST)
    with pytest.raises(ProviderError, match="not found"):
        provider.generate(REQUEST)


def test_an_answer_without_text_is_an_empty_reply(serve):
    server = serve(lambda seen, n: Answer(""))
    reply = openai(server).generate(REQUEST)
    assert reply.ok and reply.text == ""


THINKING = {"type": "enabled", "budget_tokens": 2048}


def test_anthropic_messages(serve):
    server = serve(lambda seen, n: Answer(code_reply(fake_code("correct 1.0")), prompt_tokens=10, completion_tokens=20))
    provider = AnthropicProvider("claude-test", base_url=server.root, key="sk-ant-test", env_file=None, timeout=10.0,
                                 max_retries=0, sampling=Sampling(temperature=0.5, options={"thinking": THINKING}))
    reply = provider.generate(REQUEST)
    assert reply.ok and "ModelNew" in reply.text and (reply.input_tokens, reply.output_tokens) == (10, 20)
    seen = server.seen[0]
    assert seen.path == "/v1/messages"
    assert "sk-ant-test" in (seen.headers.get("x-api-key", ""), seen.headers.get("authorization", "").removeprefix("Bearer "))
    assert seen.body["max_tokens"] == providers.DEFAULT_ANTHROPIC_MAX_TOKENS and seen.body["temperature"] == 0.5
    assert seen.body["thinking"] == THINKING


@pytest.mark.parametrize("setting", [{"seed": 7}, {"reasoning_effort": "high"}])
def test_anthropic_refuses_a_setting_it_would_not_send(setting):
    with pytest.raises(ProviderError, match="takes no"):
        AnthropicProvider("claude-test", base_url="http://127.0.0.1:9", key="k", env_file=None,
                          sampling=Sampling(**setting))


def test_keys_come_from_the_environment_or_a_dot_env_file(tmp_path, monkeypatch):
    env = tmp_path / ".env"
    env.write_text('# keys\nexport OPENAI_API_KEY="sk-from-file"\nANTHROPIC_API_KEY=sk-ant # a comment\n')
    assert providers.api_key("OPENAI_API_KEY", env) == "sk-from-file"
    assert providers.api_key("ANTHROPIC_API_KEY", env) == "sk-ant"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
    assert providers.api_key("OPENAI_API_KEY", env) == "sk-from-environment"
    assert providers.api_key("OTHER_KEY", tmp_path / "absent.env") is None


def test_no_key_for_a_hosted_api_is_a_clear_error(tmp_path):
    with pytest.raises(ProviderError, match="set OPENAI_API_KEY"):
        OpenAIProvider("gpt-4o", env_file=tmp_path / ".env")


def test_the_key_goes_to_the_server_and_nowhere_else(serve, tmp_path):
    server = serve(lambda seen, n: "no code here")
    (tmp_path / ".env").write_text("GATEWAY_KEY=sk-secret-gateway\n")
    provider = openai(server, key_env="GATEWAY_KEY", env_file=tmp_path / ".env")
    provider.generate(REQUEST)
    assert server.seen[0].headers["authorization"] == "Bearer sk-secret-gateway"
    assert "sk-secret-gateway" not in json.dumps(provider.describe())


def test_a_missing_client_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ProviderError, match=r"pip install 'kbench\[models\]'"):
        OpenAIProvider("gpt-4o", base_url="http://127.0.0.1:9/v1", env_file=None)


def test_the_judge_side_never_imports_the_clients():
    code = ("import sys, kbench, kbench.cli, kbench.agents.loop, kbench.agents.providers, kbench.runs.runner; "
            "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_prices_builtin_dated_names_and_a_users_file(tmp_path):
    assert prices.price_for("openai", "gpt-4o-2024-08-06").key == "openai/gpt-4o"
    assert prices.price_for("openai", "gpt-4o-mini-2024-07-18").key == "openai/gpt-4o-mini"
    assert prices.price_for("openai", "my-local-model") is None
    table_file = tmp_path / "prices.toml"
    table_file.write_text('["openai/my-local-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n')
    table = prices.load_prices(table_file)
    price = prices.price_for("openai", "my-local-model", table)
    assert price.cost(1_000_000, 500_000) == pytest.approx(2.0) and price.source == str(table_file)
    assert price.cost(None, 10) is None
    assert prices.price_for("anthropic", "claude-sonnet-4-20250514", table).key == "anthropic/claude-sonnet-4"
    (tmp_path / "bad.json").write_text('{"m": {"input_per_mtok": "free"}}')
    with pytest.raises(prices.PriceError, match="needs numbers"):
        prices.load_prices(tmp_path / "bad.json")


AGENT = textwrap.dedent(
    """
    import json, os, pathlib, subprocess, sys, time
    if "--version" in sys.argv:
        print("test-agent 1.2")
        sys.exit(0)
    here = pathlib.Path.cwd()
    mode = sys.argv[1]
    assert (here / "problem.py").is_file() and (here / "INSTRUCTIONS.md").is_file()
    print("instructions:", len((here / "INSTRUCTIONS.md").read_text()), "characters")
    if mode == "sleep":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a child left behind
        time.sleep(60)
    if mode == "write":
        (here / "solution.py").write_text("# fake: correct 2.0\\nclass ModelNew: pass\\n")
        (here / "usage.json").write_text(json.dumps({"input_tokens": 10, "output_tokens": 20, "cost_usd": 0.5}))
    """
)


@pytest.fixture
def agent_script(tmp_path):
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


def test_the_command_agent_works_in_a_workspace_and_leaves_a_solution(agent_script):
    provider = CommandProvider(f"{sys.executable} {agent_script} write", judge=JUDGE, time_limit=30)
    assert provider.version == "test-agent 1.2" and provider.argv[0] == sys.executable  # a venv's python kept
    assert provider.files[str(agent_script)] and provider.spec.name.endswith(f"{agent_script} write")
    prompt = provider.instructions("Make it fast.", None)
    assert "solution.py" in prompt and "./evaluate" in prompt
    reply = provider.generate(Request(prompt, "level1/p1", "# problem\n", 0, 1))
    assert reply.ok and reply.solution.startswith("# fake: correct 2.0")
    assert not reply.answer_in_text and "instructions:" in reply.text
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (10, 20, 0.5)
    assert reply.details["timed_out"] is False and reply.details["returncode"] == 0
    assert provider.describe()["time_limit_s"] == 30 and "evaluate" in provider.describe()["tools"]


def test_the_command_agent_is_stopped_at_its_time_limit(agent_script):
    provider = CommandProvider(f"{sys.executable} {agent_script} sleep", judge=JUDGE, time_limit=1,
                               version="given")
    started = time.monotonic()
    reply = provider.generate(Request("Make it fast.", "level1/p1", "# problem\n", 0, 1))
    assert time.monotonic() - started < 10
    assert reply.ok and reply.solution is None and reply.details["timed_out"] is True
    assert provider.version == "given"


def test_a_command_that_is_not_there_is_a_clear_error(tmp_path):
    with pytest.raises(ProviderError, match="no program"):
        CommandProvider("no-such-agent-program --fast", judge=JUDGE)
    with pytest.raises(ProviderError, match="cannot be split"):
        CommandProvider('agent "unclosed', judge=JUDGE)


HOSTILE_AGENT = textwrap.dedent(
    """
    import os, pathlib, subprocess, sys
    if "--version" in sys.argv:
        sys.exit(1)
    targets = {targets!r}
    for label, path in targets.items():
        try:
            with open(path, "ab") as f:  # appending nothing: changes no byte even where it succeeds
                pass
            print(label, "writable")
        except OSError as exc:
            print(label, "denied", type(exc).__name__)
    try:
        pathlib.Path(targets["source"]).with_name("_agent_was_here.py").write_text("x = 1")
        print("new source file", "writable")
    except OSError as exc:
        print("new source file", "denied", type(exc).__name__)
    print("secret", os.environ.get("KBENCH_TEST_SECRET", "absent"), "named", os.environ.get("KBENCH_TEST_NAMED"))
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "{token}"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pathlib.Path("solution.py").write_text("class ModelNew: pass\\n")
    """
)


def _running(token: str) -> list[str]:
    import pathlib

    found = []
    for cmdline in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if token.encode() in cmdline.read_bytes():
                found.append(cmdline.parent.name)
        except OSError:
            pass
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="the agent's sandbox is bubblewrap's")
def test_a_command_agent_in_its_sandbox_changes_nothing_and_leaves_nothing_running(tmp_path, monkeypatch):
    """It can write its workspace only: the store, the baseline cache and kbench's source
    are out of its reach; a setsid child dies with its PID namespace; the environment
    holds only the variables the run names, and the manifest says so."""
    import hashlib
    import uuid

    import kbench
    from kbench.agents.command_agent import AgentAccess
    from kbench.judge.processes.sandbox import SandboxUnavailable, find_sandbox

    try:
        find_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    store, cache = tmp_path / "kbench.db", tmp_path / "cache" / "baselines.json"
    cache.parent.mkdir()
    store.write_bytes(b"the store")
    cache.write_text("{}")
    package = Path(next(iter(kbench.__path__)))
    # named in the script only: a file on the agent's command line would be mounted (read-only)
    targets = {"store": str(store), "cache": str(cache), "source": str(package / "__init__.py")}
    before = {label: hashlib.sha256(open(path, "rb").read()).hexdigest() for label, path in targets.items()}
    token = f"kbench-stray-{uuid.uuid4().hex}"
    agent = tmp_path / "agents" / "hostile.py"
    agent.parent.mkdir()
    agent.write_text(HOSTILE_AGENT.format(targets=targets, token=token))
    monkeypatch.setenv("KBENCH_CACHE", str(cache.parent))
    monkeypatch.setenv("KBENCH_TEST_SECRET", "s3cret")
    monkeypatch.setenv("KBENCH_TEST_NAMED", "given")
    provider = CommandProvider(f"{sys.executable} {agent}", judge=JUDGE, time_limit=60,
                               access=AgentAccess(env=("KBENCH_TEST_NAMED",)))
    reply = provider.generate(REQUEST)
    assert reply.ok and reply.solution == "class ModelNew: pass\n", reply.text
    for label in ("store", "cache", "source", "new source file"):
        assert f"{label} denied" in reply.text, reply.text
    assert "secret absent named given" in reply.text
    after = {label: hashlib.sha256(open(path, "rb").read()).hexdigest() for label, path in targets.items()}
    assert after == before and not (package / "_agent_was_here.py").exists()
    deadline = time.monotonic() + 5
    while _running(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _running(token) == []
    described = provider.describe()
    assert described["sandbox"]["kind"] == "bubblewrap" and "pid" in described["sandbox"]["namespaces"]
    assert described["sandbox"]["network"] is False and described["sandbox"]["gpu"] is False
    assert "network" in described["sandbox"]["namespaces"]
    assert "KBENCH_TEST_NAMED" in described["environment"] and "KBENCH_TEST_SECRET" not in described["environment"]
    assert provider.settings()["network"] is False and provider.settings()["env"] == ["KBENCH_TEST_NAMED"]


def test_a_command_agent_without_a_sandbox_is_refused_unless_the_run_says_so(monkeypatch, agent_script):
    import dataclasses

    from kbench.agents import command_agent
    from kbench.judge.processes.sandbox import SandboxUnavailable

    def unavailable():
        raise SandboxUnavailable("not here")

    monkeypatch.setattr(command_agent, "find_sandbox", unavailable)
    with pytest.raises(SandboxUnavailable, match="--no-sandbox"):
        CommandProvider(f"{sys.executable} {agent_script} write", judge=JUDGE, version="given")
    provider = CommandProvider(f"{sys.executable} {agent_script} write", judge=dataclasses.replace(JUDGE, sandbox=False),
                               version="given")
    assert provider.describe()["sandbox"]["kind"] == "none"
    reply = provider.generate(REQUEST)
    assert reply.ok and reply.solution.startswith("# fake")


def test_the_evaluate_tool_is_answered_outside_and_reads_only_plain_files_of_the_workspace(tmp_path):
    """The tool in the workspace sends a file name; the harness judges a copy of that file
    against its own copy of the problem. A link (to the store, another run's files) or a
    path out of the workspace is refused, and so is anything but the two flags."""
    from kbench.agents.evaluate_tool import SOCKET, TOOL, EvaluateServer, read_plain_file

    workspace, outside = tmp_path / "ws", tmp_path / "kbench.db"
    (workspace / ".kbench").mkdir(parents=True)
    outside.write_text("the store")
    (workspace / "solution.py").write_text("class ModelNew: pass\n")
    (workspace / "problem.py").write_text("# rewritten by the agent\n")
    (workspace / "link.py").symlink_to(outside)
    (workspace / "evaluate").write_text(TOOL.format(python=sys.executable, socket=SOCKET))
    (workspace / "evaluate").chmod(0o755)
    assert read_plain_file(workspace, "link.py", 100) is None and read_plain_file(workspace, "../kbench.db", 100) is None
    assert read_plain_file(workspace, "solution.py", 5) is None  # over the limit
    assert read_plain_file(workspace, "solution.py", 100) == b"class ModelNew: pass\n"

    def command(candidate, problem, flags):
        shown = "import sys; print(open(sys.argv[1]).read() + open(sys.argv[2]).read() + ' '.join(sys.argv[3:]))"
        return [sys.executable, "-c", shown, str(candidate), str(problem), *flags]

    server = EvaluateServer(workspace, "# the problem\n", command, {})
    try:
        def tool(*args):
            return subprocess.run([str(workspace / "evaluate"), *args], cwd=workspace, capture_output=True, text=True,
                                  timeout=60)

        done = tool("--no-timing")
        assert done.returncode == 0 and done.stdout == "class ModelNew: pass\n# the problem\n--no-timing\n"
        for refused in (("link.py",), ("../kbench.db",), ("--rm-rf",)):
            done = tool(*refused)
            assert done.returncode == 2 and "ModelNew" not in done.stdout, (refused, done.stdout)
        assert server.calls == 1
    finally:
        server.close()
    assert outside.read_text() == "the store"
