"""The agent loop through ``kbench run --model``: samples, turns, feedback, resumption, overlap.

A model server on loopback answers (real HTTP); the judge is the fake one of run_fixtures
except in the two tests marked as using the real one.
"""

import dataclasses
import json
import re
import sys
import textwrap
import threading
import time

import pytest
from conftest import SOLUTIONS
from model_server import Answer, code_reply, fake_code
from run_fixtures import FakeJudge, problem_dir
from typer.testing import CliRunner

from kbench import judge
from kbench.cli import app
from kbench.cli import run as cli_runs
from kbench.runs.records import TurnRecord
from kbench.runs.score import turn_outcome
from kbench.runs.store import Store

SECRET = "sk-test-secret-never-stored"


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """Runs the kbench app in this process, in tmp_path, with a fake judge and a key in .env."""
    monkeypatch.chdir(tmp_path)
    for name in ("KBENCH_DB", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    fake = FakeJudge()
    monkeypatch.setattr(cli_runs, "evaluate", fake)
    runner_ = CliRunner()

    def invoke(*args):
        return runner_.invoke(app, [str(a) for a in args], catch_exceptions=False)

    invoke.judge = fake
    return invoke


def ask(cli, server, problems, *options, run="r"):
    return cli("run", "--run", run, "--model", "openai/test-model", "--base-url", server.url, "-p", problems,
               "--device", "cpu", "--plain", *options)


def problem_of(seen) -> str:
    return re.search(r"## Problem: (\S+)", seen.prompt).group(1)


def score_json(cli, run="r"):
    done = cli("score", run, "--json", "--resamples", "200")
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def test_samples_with_and_without_usable_code_are_stored_and_scored(cli, serve, tmp_path):
    problems = problem_dir(tmp_path / "problems", ["p1", "p2"])

    def respond(seen, n):
        if problem_of(seen) == "level1/p1":
            return Answer(code_reply(fake_code("correct 2.0")), prompt_tokens=1000, completion_tokens=500)
        return Answer("I would rather not write a kernel today.", prompt_tokens=1000, completion_tokens=10)

    server = serve(respond)
    (tmp_path / "prices.toml").write_text('["openai/test-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\n')
    done = ask(cli, server, problems, "--samples", "2", "--prices", "prices.toml", "--temperature", "0.7",
               "--reasoning-effort", "high", "--option", "service_tier=flex", "--option", 'metadata={"lab": "k"}')
    assert done.exit_code == 0, done.output
    assert len(server.seen) == 4 and len(cli.judge.calls) == 2  # no judge for a reply without code
    assert server.seen[0].headers["authorization"] == f"Bearer {SECRET}"
    body = server.seen[0].body
    assert (body["temperature"], body["reasoning_effort"], body["service_tier"], body["metadata"]) == (
        0.7, "high", "flex", {"lab": "k"})
    with Store(tmp_path / "kbench.db") as store:
        data = store.load("r")
    assert {(e.problem_id, e.sample_index): e.status for e in data.evaluations} == {
        ("level1/p1", 0): "correct", ("level1/p1", 1): "correct",
        ("level1/p2", 0): "no_code", ("level1/p2", 1): "no_code",
    }
    no_code = next(t for t in data.turns if t.problem_id == "level1/p2")
    assert no_code.source is None and no_code.reason.startswith("no_code:") and "rather not" in no_code.reply
    solved = {s.problem_id: s for s in data.samples}["level1/p1"]
    assert solved.source.startswith("# fake: correct 2.0") and solved.origin == "openai/test-model"
    assert all(t.input_tokens == 1000 for t in data.turns)
    assert [t.cost_usd for t in data.turns if t.problem_id == "level1/p1"] == pytest.approx([0.002, 0.002])

    document = score_json(cli)
    assert document["correct_rate"] == pytest.approx(0.5) and document["failures"] == {"no_code": 2}
    assert document["usage"]["requests"] == 4 and document["usage"]["input_tokens"] == 4000
    assert document["usage"]["cost_usd"] == pytest.approx(2 * 0.002 + 2 * 0.00102)
    assert len(document["usage"]["samples"]) == 4
    generation = document["manifest"]["generation"]
    assert generation["model"] == "test-model" and generation["endpoint"].startswith(server.url)
    assert generation["templates"]["initial"]["name"] == "one-shot" and len(generation["templates"]["initial"]["sha256"]) == 64
    assert generation["price"]["input_per_mtok"] == 1.0 and generation["concurrency"] == 4
    config = document["manifest"]["config"]
    assert (config["source"], config["solutions"], config["samples"], config["turns"]) == ("openai", "openai/test-model", 2, 1)
    assert config["generation"]["sampling"] == {"temperature": 0.7, "top_p": None, "max_tokens": None, "seed": None,
                                                "reasoning_effort": "high",
                                                "options": {"service_tier": "flex", "metadata": {"lab": "k"}}}
    assert SECRET.encode() not in (tmp_path / "kbench.db").read_bytes()


def test_the_second_turn_carries_the_first_verdicts_feedback(cli, serve, tmp_path):
    problems = problem_dir(tmp_path / "problems", ["p1"])

    def respond(seen, n):
        if "This is turn 2" in seen.prompt:
            return code_reply(fake_code("correct 1.5"))
        return code_reply(fake_code("incorrect"))

    server = serve(respond)
    done = ask(cli, server, problems, "--turns", "2")
    assert done.exit_code == 0, done.output
    assert "level1/p1 #0 turn 1: incorrect" in done.output
    first, second = [seen.prompt for seen in server.seen]
    assert "This is turn" not in first and "made by hand" not in first
    assert "made by hand: incorrect" in second and "- status: incorrect" in second  # the verdict's reason
    assert "# fake: incorrect" in second  # the previous solution
    with Store(tmp_path / "kbench.db") as store:
        data = store.load("r")
    assert [(t.turn, t.status, t.prompt_record["template"]) for t in data.turns] == [
        (1, "incorrect", "one-shot"), (2, "correct", "refine")]
    assert [(e.status, e.turn) for e in data.evaluations] == [("correct", 2)]
    document = score_json(cli)
    assert document["by_turn"]["1"]["correct_rate"] == 0.0 and document["by_turn"]["2"]["correct_rate"] == 1.0
    assert document["by_turn"]["2"]["fast_p"]["eager"]["1"] == 1.0
    assert document["manifest"]["config"]["generation"]["refine_template"]["name"] == "refine"
    assert "feedback" in document["manifest"]["generation"]["agent_loop"]


def test_the_best_judged_turn_is_the_samples_outcome(cli, serve, tmp_path):
    problems = problem_dir(tmp_path / "problems", ["p1"])
    marks = ["correct 1.8", "correct 1.2", "incorrect"]
    server = serve(lambda seen, n: code_reply(fake_code(marks[n])))
    assert ask(cli, server, problems, "--turns", "3").exit_code == 0
    document = score_json(cli)
    assert [document["by_turn"][t]["fast_p"]["eager"]["1.5"] for t in "123"] == [1.0, 1.0, 1.0]
    with Store(tmp_path / "kbench.db") as store:
        (outcome,) = store.evaluations("r")
    assert outcome.turn == 1 and outcome.speedup == {"eager": 1.8}


class RegressingJudge(FakeJudge):
    """Measures a solution it has judged before 20% slower: a first speedup that was lucky."""

    def __call__(self, problem, solution, *args, **kwargs):
        again = any(name == solution.path.name for _, name in self.calls)
        verdict = super().__call__(problem, solution, *args, **kwargs)
        return dataclasses.replace(verdict, speedup={"eager": verdict.speedup["eager"] * 0.8}) if again else verdict


def test_a_best_turn_chosen_by_speed_is_measured_again_before_it_is_scored(cli, serve, tmp_path, monkeypatch):
    problems = problem_dir(tmp_path / "problems", ["p1"])
    marks = ["correct 1.8", "correct 1.2"]
    server = serve(lambda seen, n: code_reply(fake_code(marks[n])))
    regressing = RegressingJudge()
    monkeypatch.setattr(cli_runs, "evaluate", regressing)
    assert ask(cli, server, problems, "--turns", "2").exit_code == 0
    assert [name for _, name in regressing.calls] == ["turn_1.py", "turn_2.py", "turn_1.py"]
    with Store(tmp_path / "kbench.db") as store:
        (outcome,) = store.evaluations("r")
    assert outcome.turn == 1 and outcome.speedup == {"eager": pytest.approx(1.44)}
    assert outcome.verdict["selection"] == {"turn": 1, "correct_turns": 2, "selected_speedup": {"eager": 1.8}}


class SlowThenInterruptingJudge(FakeJudge):
    """Takes its time with the first candidate (the other replies arrive meanwhile), then is interrupted."""

    def __call__(self, *args, **kwargs):
        if not self.calls:
            time.sleep(0.5)
        elif len(self.calls) == 1:
            raise KeyboardInterrupt
        return super().__call__(*args, **kwargs)


def test_an_interrupted_run_resumes_without_asking_the_model_again(cli, serve, tmp_path, monkeypatch):
    problems = problem_dir(tmp_path / "problems", ["p1"])
    server = serve(lambda seen, n: code_reply(fake_code("correct 1.5")))
    monkeypatch.setattr(cli_runs, "evaluate", SlowThenInterruptingJudge())
    done = ask(cli, server, problems, "--samples", "3")
    assert done.exit_code == 130 and "interrupted" in done.output
    with Store(tmp_path / "kbench.db") as store:
        turns = store.turns("r")
        assert len(turns) == 3 and [t.status for t in turns].count(None) == 2  # replies stored, not judged
    assert len(server.seen) == 3
    resumed = FakeJudge()
    monkeypatch.setattr(cli_runs, "evaluate", resumed)
    again = cli("run", "--run", "r", "--plain")  # everything else from the stored run
    assert again.exit_code == 0, again.output
    assert len(server.seen) == 3 and len(resumed.calls) == 2
    with Store(tmp_path / "kbench.db") as store:
        assert [e.status for e in store.evaluations("r")] == ["correct"] * 3
        assert [s.number for s in store.sessions("r")] == [1, 2]
    assert cli("run", "--run", "r", "--plain").exit_code == 0 and len(server.seen) == 3


def test_a_request_that_times_out_is_recorded_and_asked_again_on_resume(cli, serve, tmp_path):
    problems = problem_dir(tmp_path / "problems", ["p1", "p2"])
    slow = {"level1/p2": True}

    def respond(seen, n):
        delay = 3.0 if slow.get(problem_of(seen)) else 0.0
        return Answer(code_reply(fake_code("correct 1.5")), delay=delay)

    server = serve(respond)
    done = ask(cli, server, problems, "--request-timeout", "1", "--max-retries", "0")
    assert done.exit_code == 0, done.output
    assert "retries them" in done.output
    with Store(tmp_path / "kbench.db") as store:
        statuses = {e.problem_id: (e.status, e.reason) for e in store.evaluations("r")}
    assert statuses["level1/p1"][0] == "correct"
    assert statuses["level1/p2"][0] == "generation_error" and "timeout" in statuses["level1/p2"][1]
    slow.clear()
    asked = len(server.seen)
    assert cli("run", "--run", "r", "--plain").exit_code == 0
    assert [problem_of(seen) for seen in server.seen[asked:]] == ["level1/p2"]
    with Store(tmp_path / "kbench.db") as store:
        assert {e.status for e in store.evaluations("r")} == {"correct"}


def test_generation_overlaps_evaluation_within_the_concurrency_limit(cli, serve, tmp_path, monkeypatch):
    problems = problem_dir(tmp_path / "problems", ["p1"])
    server = serve(lambda seen, n: Answer(code_reply(fake_code("correct 1.5")), delay=0.4))
    judged: list[tuple[float, float]] = []

    class TimedJudge(FakeJudge):
        def __call__(self, *args, **kwargs):
            started = time.monotonic()
            time.sleep(0.4)
            judged.append((started, time.monotonic()))
            return super().__call__(*args, **kwargs)

    monkeypatch.setattr(cli_runs, "evaluate", TimedJudge())
    done = ask(cli, server, problems, "--samples", "6", "--concurrency", "2")
    assert done.exit_code == 0, done.output
    assert server.max_in_flight == 2 and len(judged) == 6
    overlapping = [s for s in server.seen if any(s.arrived < end and start < s.answered for start, end in judged)]
    assert overlapping, "no request was in flight while a candidate was judged"


def test_a_models_run_judges_on_every_device_it_is_given(cli, serve, tmp_path, monkeypatch):
    problems = problem_dir(tmp_path / "problems", ["p1", "p2"])
    server = serve(lambda seen, n: code_reply(fake_code("correct 1.5")))
    judging: list[tuple[str, float, float]] = []

    class SlowJudge(FakeJudge):
        def __call__(self, *args, **kwargs):
            started = time.monotonic()
            time.sleep(0.5)
            judging.append((threading.current_thread().name, started, time.monotonic()))
            return super().__call__(*args, **kwargs)

    monkeypatch.setattr(cli_runs, "evaluate", SlowJudge())
    monkeypatch.setattr(cli_runs, "_devices", lambda gpus, device: ["cpu", "cpu"])  # two GPUs' worth, on the CPU
    done = ask(cli, server, problems, "--samples", "3", "--gpus", "0,1")
    assert done.exit_code == 0, done.output
    assert len(judging) == 6 and len({thread for thread, _, _ in judging}) == 2
    assert any(a[1] < b[2] and b[1] < a[2] for a in judging for b in judging if a[0] != b[0])  # at once
    with Store(tmp_path / "kbench.db") as store:
        assert [e.status for e in store.evaluations("r")] == ["correct"] * 6
        (session,) = store.sessions("r")
    assert session.manifest.executor["devices"] == ["cpu", "cpu"]
    refused = ask(cli, server, problems, "--build-jobs", "2", run="other")
    assert refused.exit_code == 2 and "runs of files" in refused.output


def test_replay_through_model_and_usage_errors(cli, serve, tmp_path):
    problems = problem_dir(tmp_path / "problems", ["p1"])
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "p1.py").write_text(fake_code("correct 1.1"))
    done = cli("run", "--run", "replayed", "--model", f"replay/{solutions}", "-p", problems, "--device", "cpu")
    assert done.exit_code == 0, done.output
    assert cli.judge.calls == [("level1/p1", "p1.py")]

    server = serve(lambda seen, n: code_reply(fake_code("correct 1.5")))
    cases = [
        (["--model", "gpt-4o", "-p", problems], "expected PROVIDER/MODEL"),
        (["--model", "openai/gpt-4o", "-p", problems, "--env-file", "absent.env"], "set OPENAI_API_KEY"),
        (["--model", f"replay/{solutions}", "-p", problems, "--samples", "2"], "--samples need a model"),
        (["--model", "openai/m", "--solutions", solutions, "-p", problems], "not both"),
        (["--model", "openai/m", "--base-url", server.url, "-p", problems, "--template", "no-such"],
         "no built-in template"),
        (["--model", "openai/m", "--base-url", server.url, "-p", problems, "--template", "refine"],
         "'refine' template"),
    ]
    for options, message in cases:
        (tmp_path / "absent.env").unlink(missing_ok=True)
        failed = cli("run", "--run", "bad", *options)
        assert failed.exit_code == 2 and message in " ".join(failed.output.split()), (options, failed.output)
    assert not server.seen
    refused = serve(lambda seen, n: Answer("invalid key", status=401))
    stopped = ask(cli, refused, problems, run="refused")
    assert stopped.exit_code == 2 and "refused the API key" in stopped.output and len(refused.seen) == 1
    assert ask(cli, server, problems, "--temperature", "0.2").exit_code == 0
    changed = ask(cli, server, problems, "--temperature", "0.9")
    assert changed.exit_code == 2 and "sampling" in changed.output
    malformed = ask(cli, server, problems, "--option", "no-equals-sign", run="malformed")
    assert malformed.exit_code == 2 and "expected KEY=VALUE" in malformed.output


def test_a_user_template_is_pinned_by_its_hash(cli, serve, tmp_path):
    problems = problem_dir(tmp_path / "problems", ["p1"])
    server = serve(lambda seen, n: code_reply(fake_code("correct 1.5")))
    template = tmp_path / "terse.txt"
    template.write_text("name: terse\nversion: 3\n---\nFaster $language for this, please:\n$problem_source\n")
    assert ask(cli, server, problems, "--template", template).exit_code == 0
    assert server.seen[0].prompt.startswith("Faster Triton for this, please:")
    with Store(tmp_path / "kbench.db") as store:
        generation = store.run("r").config.generation
    assert generation["template"]["origin"] == str(template) and generation["template"]["version"] == "3"
    template.write_text("name: terse\nversion: 3\n---\nSomething else: $problem_source\n")
    changed = cli("run", "--run", "r", "--plain")
    assert changed.exit_code == 2 and "template" in changed.output


AGENT = textwrap.dedent(
    """
    import pathlib, shutil, subprocess, sys
    if "--version" in sys.argv:
        print("file-copying agent 0.1")
        sys.exit(0)
    shutil.copy(sys.argv[1], "solution.py")
    checked = subprocess.run(["./evaluate", "--no-timing"], capture_output=True, text=True)
    print("the evaluate tool said:", checked.stdout, checked.stderr)
    """
)


def quick_real_judge(monkeypatch):
    """The real judge with a short timing budget; returns the list of problems it was asked about."""
    calls = []

    def real(*args, **kwargs):
        calls.append(args[0].id)
        kwargs["timing"] = dataclasses.replace(kwargs["timing"], budget_seconds=0.5)  # the run's, quicker
        return judge.evaluate(*args, **kwargs)

    monkeypatch.setattr(cli_runs, "evaluate", real)
    return calls


def test_an_external_agent_with_the_real_judge(cli, tmp_path, monkeypatch):
    """Real judge: the agent calls the workspace's evaluate tool once, then its solution.py is judged."""
    problems = problem_dir(tmp_path / "problems", ["linear_tanh"])
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    calls = quick_real_judge(monkeypatch)
    command = f"command/{sys.executable} {agent} {SOLUTIONS / 'honest_triton.py'}"
    monkeypatch.setenv("KBENCH_TEST_NAMED", "given")
    done = cli("run", "--run", "a", "--model", command, "-p", problems, "--device", "cpu", "--trials", "2",
               "--agent-time-limit", "240", "--agent-network", "--agent-env", "KBENCH_TEST_NAMED", "--plain")
    assert done.exit_code == 0, done.output
    assert calls == ["level1/linear_tanh"]
    with Store(tmp_path / "kbench.db") as store:
        data = store.load("a")
    (turn,) = data.turns
    assert turn.status == "correct" and turn.generation["tool_calls"] == 1
    assert "the evaluate tool said:" in turn.reply and "correct" in turn.reply.split("the evaluate tool said:")[1]
    assert "./evaluate" in turn.prompt and turn.source == (SOLUTIONS / "honest_triton.py").read_text()
    agent_config = data.run.config.generation["agent"]
    assert agent_config["version"] == "file-copying agent 0.1" and agent_config["time_limit_s"] == 240
    assert agent_config["files_sha256"][str(agent)]
    manifest = data.sessions[0].manifest.generation
    assert manifest["tools"]["evaluate"]
    # the agent ran in its own sandbox, as the run allowed: the network, no GPU, one variable by name
    assert manifest["sandbox"]["kind"] == "bubblewrap" and manifest["sandbox"]["network"] is True
    assert manifest["sandbox"]["gpu"] is False and "network" not in manifest["sandbox"]["namespaces"]
    assert "KBENCH_TEST_NAMED" in manifest["environment"] and "given" not in json.dumps(manifest)
    assert (agent_config["network"], agent_config["gpu"], agent_config["env"]) == (True, False, ["KBENCH_TEST_NAMED"])


def test_refinement_with_the_real_judges_feedback(cli, serve, tmp_path, monkeypatch):
    """Real judge: a wrong first answer, whose verdict must reach the second prompt."""
    problems = problem_dir(tmp_path / "problems", ["linear_tanh"])
    wrong, honest = (SOLUTIONS / "wrong_values.py").read_text(), (SOLUTIONS / "honest_triton.py").read_text()
    server = serve(lambda seen, n: code_reply(honest if "This is turn 2" in seen.prompt else wrong))
    calls = quick_real_judge(monkeypatch)
    done = ask(cli, server, problems, "--turns", "2", "--trials", "2", "--policy", "off")
    assert done.exit_code == 0, done.output
    assert len(calls) == 2
    with Store(tmp_path / "kbench.db") as store:
        first, second = store.turns("r")
    assert first.status == "incorrect" and second.status == "correct"
    assert first.reason in server.seen[1].prompt and "forgets the bias" in server.seen[1].prompt


def test_a_samples_outcome_after_each_turn():
    def turn(number, status, speedup=None):
        return TurnRecord("p", 0, number, 1, "", {}, "", None, None, None, {}, status=status,
                          speedup={"eager": speedup})

    chain = [turn(1, "correct", 1.2), turn(2, "incorrect"), turn(3, "correct", 1.1)]
    assert [turn_outcome(chain, t, "eager").speedup["eager"] for t in (1, 2, 3)] == [1.2, 1.2, 1.2]
    assert turn_outcome(chain[:2], 3, "eager").status == "pending"
    waiting = [turn(1, "incorrect"), turn(2, None)]
    assert turn_outcome(waiting, 1, "eager").status == "incorrect"
    assert turn_outcome(waiting, 2, "eager").status == "pending"
    failed = [turn(1, "correct", 2.0), turn(2, "generation_error")]
    assert turn_outcome(failed, 1, "eager").status == "correct"
    assert turn_outcome(failed, 2, "eager").status == "generation_error"
    assert turn_outcome([turn(1, "no_code"), turn(2, "compile_error")], 2, "eager").status == "compile_error"


def test_the_cost_reads_unknown_when_no_reply_had_a_price():
    from kbench.agents.loop import Usage

    assert Usage(requests=4, cost_unknown=4).cost_text() == "cost unknown (no price for these replies)"
    assert Usage(requests=5, failed_requests=1, cost_usd=0.0123, cost_unknown=1).cost_text() == \
        "cost $0.0123 for 3 replies, 1 more of unknown cost"
    assert Usage(requests=2, cost_usd=0.5).cost_text() == "cost $0.5000"
