"""``kbench run --track repo``: patches replayed from a directory, asked of a model (the loopback
model server) or of a command agent in a workspace, judged, stored and scored apart.

The task is tests/repo_fixture.py's tiny repository. The judge is a fake one reading a mark in
the patch, except in the tests marked slow, which judge on the CPU with kbench.repo's own."""

import dataclasses
import json
import re
import shutil
import sys
import textwrap

import pytest
from model_server import Answer
from repo_fixture import make_task
from repo_run_fixtures import repo_verdict
from typer.testing import CliRunner

from kbench.cli import app
from kbench.cli import repo_run as cli_repo
from kbench.repo import evaluate_patch
from kbench.runs.store import Store

# A fake patch says what verdict it gets: a line "+# fake: correct 2.0 1.95 2.0" (speedup, its interval's
# lower bound, the expert's speedup) or "+# fake: incorrect hidden" (a hidden test fails).
MARK = re.compile(r"# fake: (\w+)(?: ([\d.]+) ([\d.]+) ([\d.]+))?(?: (hidden))?")


class FakePatchJudge:
    def __init__(self):
        self.calls = []

    def __call__(self, task, patch, device, *, size, trials, timeout, policy, sandbox):
        self.calls.append((task.id, patch.text))
        status, speedup, low, expert, hidden = MARK.search(patch.text).groups()
        verdict = repo_verdict(task.id, status, *(float(x) if x else None for x in (speedup, low, expert)))
        if hidden:
            verdict.reason = "a hidden test failed: hidden/test_norm_hidden.py::test_eps_is_used\nE   eps unused"
            verdict.output_tail = "hidden/test_norm_hidden.py F"
        return verdict


def fake_patch(mark: str, file: str = "tinyops/norm.py") -> str:
    return f"diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -1 +1,2 @@\n context\n+# fake: {mark}\n"


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    """Two tasks of the fixture repository (the second a copy of the first), and its patches."""
    root = tmp_path_factory.mktemp("tasks")
    task_file, patches = make_task(root)
    second = task_file.parent.parent / "rmsnorm2"
    shutil.copytree(task_file.parent, second)
    return task_file.parent, second, patches


@pytest.fixture
def cli(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name in ("KBENCH_DB", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-test\n")
    fake = FakePatchJudge()
    monkeypatch.setattr(cli_repo, "evaluate_patch", fake)
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    invoke.judge = fake
    return invoke


def load(tmp_path, run):
    with Store(tmp_path / "kbench.db") as store:
        return store.load(run)


def score_json(cli, run):
    done = cli("score", run, "--json", "--resamples", "200")
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def test_a_replay_of_patch_files_named_by_task_is_stored_and_scored_apart(cli, task_files, tmp_path):
    first, second, _ = task_files
    patches = tmp_path / "patches"
    (patches / "tinyops").mkdir(parents=True)
    (patches / "tinyops" / "rmsnorm.patch").write_text(fake_patch("correct 2.0 1.95 2.0"))
    (patches / "stray.patch").write_text(fake_patch("correct 9.0 9.0 9.0"))
    done = cli("run", "--run", "r", "--track", "repo", "--tasks", f"{first},{second}", "--solutions", patches,
               "--device", "cpu", "--plain")
    assert done.exit_code == 0, done.output
    assert "1 patch files in" in done.output and "stray.patch" in done.output  # matched no task: said
    assert [task for task, _ in cli.judge.calls] == ["tinyops/rmsnorm"]
    assert "repository track" in done.output and "solved" in done.output  # the score printed is the track's own
    data = load(tmp_path, "r")
    config = data.run.config
    assert (config.track, config.baselines, config.source) == ("repo", ("base",), "replay")
    assert [(p.problem_id, p.level) for p in data.problems] == [("tinyops/rmsnorm", None), ("tinyops/rmsnorm2", None)]
    assert data.problems[0].source == (first / "task.toml").read_text() and len(data.problems[0].sha256) == 64
    pins = data.sessions[0].manifest.tasks
    commit = re.search(r'commit = "(\w+)"', (first / "task.toml").read_text()).group(1)
    assert pins["tinyops/rmsnorm"] == {"sha256": data.problems[0].sha256, "commit": commit,
                                       "repository": str(first.parent / "tinyops.bundle")}
    assert [(s.problem_id, s.name, s.source) for s in data.samples] == [
        ("tinyops/rmsnorm", "tinyops/rmsnorm.patch", fake_patch("correct 2.0 1.95 2.0"))]
    assert [(e.problem_id, e.status) for e in data.evaluations] == [("tinyops/rmsnorm", "correct"),
                                                                    ("tinyops/rmsnorm2", "missing")]
    document = score_json(cli, "r")
    assert document["track"] == "repo" and document["n_tasks"] == 2
    assert (document["faster_than_base"], document["correct_rate"]) == (0.5, 0.5)
    # a CPU run claims no solved and no fraction of the expert (issue 59: the expert is interpreted there)
    assert document["solved"] is None and document["mean_fraction_of_expert"] is None
    assert document["not_meaningful"]["not_claimed"] == ["solved", "mean_fraction_of_expert"]
    assert document["failures"] == {"missing": 1}
    shown = cli("show", "r", "tinyops/rmsnorm", "--full")
    assert shown.exit_code == 0 and "+# fake: correct 2.0" in shown.output  # the patch, as stored
    again = cli("run", "--run", "r", "--device", "cpu", "--plain")  # resumed: nothing left to judge
    assert again.exit_code == 0, again.output
    assert len(cli.judge.calls) == 1 and "0 to evaluate" in again.output


def test_a_run_is_of_one_track_and_the_kernel_tracks_options_are_refused(cli, task_files, tmp_path):
    first, _, _ = task_files
    patches = tmp_path / "patches"
    patches.mkdir()
    common = ("--solutions", patches, "--device", "cpu", "--plain")
    for args, says in [
        (("--track", "repo", "--tasks", first, "--problems", "level1"), "--problems: not for the repository track"),
        (("--track", "repo", "--tasks", first, "--dtype", "bfloat16"), "--dtype: not for the repository track"),
        (("--track", "kernel", "--tasks", first), "--tasks selects repository tasks"),
        (("--track", "contest", "--tasks", first), "choose kernel or repo"),
        (("--tasks", "tinyops/absent"), "no task file or bundled task id 'tinyops/absent'"),
    ]:
        done = cli("run", "--run", "x", *args, *common)
        assert done.exit_code == 2 and says in done.output, (args, done.output)
    assert cli("run", "--run", "r", "--tasks", first, *common).exit_code == 0  # --tasks alone: the repo track
    done = cli("run", "--run", "r", "--track", "kernel", *common)
    assert done.exit_code == 2 and "is of the repo track" in done.output
    assert not cli.judge.calls


def test_a_repository_run_is_rejudged_with_its_stored_patches(cli, task_files, tmp_path, monkeypatch):
    first, second, _ = task_files
    patches = tmp_path / "patches" / "tinyops"
    patches.mkdir(parents=True)
    (patches / "rmsnorm.patch").write_text(fake_patch("rejected"))
    (patches / "rmsnorm2.patch").write_text(fake_patch("correct 2.0 1.95 2.0"))
    assert cli("run", "--run", "r", "--tasks", first, "--tasks", second, "--solutions", patches.parent,
               "--device", "cpu", "--plain").exit_code == 0
    fixed = FakePatchJudge()  # a judge fixed since: the same patch now correct
    monkeypatch.setattr(cli_repo, "evaluate_patch", lambda task, patch, *a, **k: fixed(
        task, dataclasses.replace(patch, text=patch.text.replace("rejected", "correct 1.5 1.45 1.5")), *a, **k))
    done = cli("run", "--run", "r", "--rejudge", "rejected", "--device", "cpu", "--plain")
    assert done.exit_code == 0, done.output
    assert [task for task, _ in fixed.calls] == ["tinyops/rmsnorm"]
    data = load(tmp_path, "r")
    assert [(e.problem_id, e.status, e.session) for e in data.evaluations] == [
        ("tinyops/rmsnorm", "correct", 2), ("tinyops/rmsnorm2", "correct", 1)]
    assert [e.status for e in data.superseded] == ["rejected"]


def diff_reply(mark: str) -> str:
    return f"The loop over rows is the cost.\n\n```diff\n{fake_patch(mark)}```\n"


def test_a_models_patches_are_read_from_its_replies_and_refined_with_the_verdict(cli, serve, task_files, tmp_path):
    first, _, _ = task_files

    def respond(seen, n):
        return diff_reply("correct 3.0 2.95 3.0" if "This is turn 2" in seen.prompt else "incorrect hidden")

    server = serve(respond)
    done = cli("run", "--run", "m", "--tasks", first, "--model", "openai/test-model", "--base-url", server.url,
               "--turns", "2", "--device", "cpu", "--plain")
    assert done.exit_code == 0, done.output
    first_prompt, second_prompt = (seen.prompt for seen in server.seen)
    assert "for i in range(rows.shape[0])" in first_prompt and "`tests/test_norm.py`" in first_prompt
    assert "test_norm_hidden" not in first_prompt + second_prompt and "eps unused" not in second_prompt
    assert "a hidden test failed (the hidden tests are not shown" in second_prompt
    assert "+# fake: incorrect hidden" in second_prompt  # the previous patch, for the model to revise
    assert [text for _, text in cli.judge.calls] == [fake_patch("incorrect hidden"), fake_patch("correct 3.0 2.95 3.0")]
    data = load(tmp_path, "m")
    assert data.run.config.track == "repo" and data.run.config.generation["template"]["name"] == "repo"
    assert [(t.turn, t.status, t.extraction["how"]) for t in data.turns] == [(1, "incorrect", "fenced"),
                                                                            (2, "correct", "fenced")]
    assert data.turns[0].prompt == first_prompt and data.turns[0].reply == diff_reply("incorrect hidden")
    (sample,) = data.samples
    assert sample.source == fake_patch("correct 3.0 2.95 3.0") and data.evaluations[0].turn == 2
    document = score_json(cli, "m")
    assert document["correct_rate"] == 1.0 and document["by_turn"]["1"]["correct_rate"] == 0.0
    assert document["solved"] is None and document["by_turn"]["1"]["solved"] is None  # a CPU run
    assert document["usage"]["requests"] == 2


def test_a_reply_without_a_diff_is_no_code_and_never_judged(cli, serve, task_files, tmp_path):
    first, _, _ = task_files
    server = serve(lambda seen, n: "```python\nimport torch\n```\n")
    done = cli("run", "--run", "m", "--tasks", first, "--model", "openai/test-model", "--base-url", server.url,
               "--device", "cpu", "--plain")
    assert done.exit_code == 0, done.output
    (turn,) = load(tmp_path, "m").turns
    assert turn.status == "no_code" and turn.reason.startswith("no_diff:") and not cli.judge.calls


# --- the real judge, on the CPU ----------------------------------------------------------------

def quick_evaluate_patch(monkeypatch, tmp_path):
    """kbench.repo's evaluate_patch with a short timing budget, its caches under tmp_path."""
    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    calls = []

    def real(task, patch, device, **options):
        calls.append(task.id)
        from kbench.judge.protocol.timing import TimingSettings

        return evaluate_patch(task, patch, device, timing=dataclasses.replace(TimingSettings(), budget_seconds=1.0),
                              **options)

    monkeypatch.setattr(cli_repo, "evaluate_patch", real)
    return calls


@pytest.mark.slow
def test_replays_of_the_expert_and_a_do_nothing_patch_with_the_real_judge(cli, task_files, tmp_path, monkeypatch):
    """One command replays a directory of patches: the expert's is correct and faster than base, a
    patch that changes nothing measurable is correct and solves nothing."""
    first, _, patches = task_files
    calls = quick_evaluate_patch(monkeypatch, tmp_path)
    for name in ("expert", "nothing"):
        directory = tmp_path / name / "tinyops"
        directory.mkdir(parents=True)
        shutil.copy(patches[name], directory / "rmsnorm.patch")
        done = cli("run", "--run", name, "--tasks", first, "--solutions", directory.parent, "--device", "cpu",
                   "--trials", "2", "--plain")
        assert done.exit_code == 0, done.output
    assert calls == ["tinyops/rmsnorm", "tinyops/rmsnorm"]
    expert, nothing = score_json(cli, "expert"), score_json(cli, "nothing")
    verdict = load(tmp_path, "expert").evaluations[0].verdict
    assert verdict["status"] == "correct" and verdict["track"] == "repo", verdict["reason"]
    fraction, (low, high) = verdict["expert"]["fraction"], verdict["expert"]["fraction_interval"]
    assert low <= fraction <= high  # the expert against itself, timed beside
    # CPU times on a shared machine decide no assertion here (the expert's lower bound over the base may
    # dip under 1 while other work runs): what is checked is what the scores claim and do not.
    assert expert["correct_rate"] == 1.0 and nothing["correct_rate"] == 1.0
    # On a CPU the fraction is measured and kept in the verdict, marked, and no score claims it (issue 59).
    assert verdict["expert"]["solved"] is None and "not meaningful on a CPU" in verdict["expert"]["note"]
    assert expert["solved"] is None and expert["mean_fraction_of_expert"] is None and nothing["solved"] is None
    nothing_verdict = load(tmp_path, "nothing").evaluations[0].verdict
    assert nothing_verdict["expert"]["fraction"] < 0.5  # the expert timed beside the do-nothing patch too


AGENT = textwrap.dedent(
    """
    import pathlib, subprocess, sys
    if "--version" in sys.argv:
        print("patch-applying agent 0.1")
        sys.exit(0)
    subprocess.run(["git", "apply", sys.argv[1]], cwd="repo", check=True)
    checked = subprocess.run(["./evaluate", "--no-timing"], capture_output=True, text=True)
    print("the evaluate tool said:", checked.stdout, checked.stderr)
    """
)


@pytest.mark.slow
def test_a_command_agent_completes_a_task_with_the_real_judge(cli, task_files, tmp_path, monkeypatch):
    """The agent applies the expert patch in its workspace's repo/ and asks ./evaluate once (the
    visible tests only); its answer, the diff git makes of repo/, is judged and solves the task."""
    first, _, patches = task_files
    calls = quick_evaluate_patch(monkeypatch, tmp_path)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    done = cli("run", "--run", "a", "--tasks", first, "--model", f"command/{sys.executable} {agent} {patches['expert']}",
               "--device", "cpu", "--trials", "2", "--agent-time-limit", "300", "--plain")
    assert done.exit_code == 0, done.output
    assert calls == ["tinyops/rmsnorm"]  # the final judging; the agent's ./evaluate ran kbench eval-patch itself
    data = load(tmp_path, "a")
    (turn,) = data.turns
    assert turn.generation["tool_calls"] == 1 and turn.generation["returncode"] == 0, turn.reply
    said = turn.reply.split("the evaluate tool said:")[1]
    assert "correct" in said and "2 passed" in said and "3 passed" not in said  # visible tests only
    assert turn.source == patches["expert"].read_text()  # git's diff of the workspace: the patch applied
    assert turn.status == "correct" and turn.extraction["how"] == "git", turn.reason
    agent_config = data.run.config.generation["agent"]
    assert agent_config["version"] == "patch-applying agent 0.1"
    assert "repo/" in " ".join(data.sessions[0].manifest.generation["workspace"])
