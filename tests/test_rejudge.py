"""kbench run --rejudge: a stored run's samples of some statuses judged again, with a fake judge."""

import json

import pytest
from run_fixtures import FakeJudge, fake_solution, make_verdict, problem_dir
from typer.testing import CliRunner

from kbench.cli import app
from kbench.cli import run as cli_runs
from kbench.core.solution import Solution
from kbench.runs import rejudge, runner
from kbench.runs.manifest import Manifest
from kbench.runs.records import EvaluationRecord, RunRecord, SampleRecord, TurnRecord
from kbench.runs.store import Store


class DefectiveJudge(FakeJudge):
    """The fake judge with a defect: it rejects the correct solutions of ``rejects``."""

    def __init__(self, rejects: set[str]):
        super().__init__()
        self.rejects = rejects

    def __call__(self, problem, solution, device, **options):
        verdict = super().__call__(problem, solution, device, **options)
        if verdict.correct and problem.id in self.rejects:
            verdict = make_verdict(problem.id, "rejected")
            verdict.reason = "trusted-clock: noise taken for cheating"
        return verdict


@pytest.fixture
def cli(monkeypatch, tmp_path):
    """The kbench app in this process, in tmp_path; ``cli.judge(j)`` sets the judge it calls."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KBENCH_DB", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    runner_ = CliRunner()

    def invoke(*args):
        return runner_.invoke(app, list(args), catch_exceptions=False)

    invoke.judge = lambda judge: monkeypatch.setattr(cli_runs, "evaluate", judge)
    return invoke


def files_run(cli, tmp_path):
    """Run r: p1 and p2 correct but rejected by the defect, p3 incorrect, p4 correct, p5 missing."""
    problems = problem_dir(tmp_path / "problems", ["p1", "p2", "p3", "p4", "p5"])
    solutions = tmp_path / "solutions"
    for name, mark in {"p1": "correct 2.0", "p2": "correct 1.5", "p3": "incorrect", "p4": "correct 1.2"}.items():
        fake_solution(solutions / f"{name}.py", mark)
    cli.judge(DefectiveJudge({"level1/p1", "level1/p2"}))
    assert cli("run", "--run", "r", "--solutions", str(solutions), "--problems", str(problems)).exit_code == 0
    return problems, solutions


def test_rejudging_judges_the_stored_solutions_of_those_statuses_again_and_keeps_the_earlier_verdicts(cli, tmp_path):
    problems, solutions = files_run(cli, tmp_path)
    fake_solution(solutions / "p1.py", "incorrect")  # the file changed since: the stored source is what is judged
    fixed = FakeJudge()
    cli.judge(fixed)
    done = cli("run", "--run", "r", "--rejudge", "rejected", "--json")
    assert done.exit_code == 0, done.output
    assert sorted(fixed.calls) == [("level1/p1", "p1.py"), ("level1/p2", "p2.py")]
    assert json.loads(done.stdout)["correct_rate"] == pytest.approx(3 / 5)
    with Store(tmp_path / "kbench.db") as store:
        data = store.load("r")
    assert [s.number for s in data.sessions] == [1, 2]
    now = {e.problem_id: (e.status, e.session) for e in data.evaluations}
    assert now == {"level1/p1": ("correct", 2), "level1/p2": ("correct", 2), "level1/p3": ("incorrect", 1),
                   "level1/p4": ("correct", 1), "level1/p5": ("missing", 1)}
    assert [(e.problem_id, e.status, e.session) for e in data.superseded] == [
        ("level1/p1", "rejected", 1), ("level1/p2", "rejected", 1)]
    assert data.superseded[0].verdict["reason"] == "trusted-clock: noise taken for cheating"
    shown = cli("show", "r", "level1/p1").output
    assert "earlier verdict, session 1: rejected: trusted-clock: noise taken for cheating" in shown
    assert "judged again in session 2" in shown
    assert json.loads(cli("show", "r", "level1/p1", "--json").output)["samples"][0]["superseded"][0]["status"] == "rejected"
    again = FakeJudge()
    cli.judge(again)
    assert cli("run", "--run", "r", "--rejudge", "rejected").exit_code == 0 and again.calls == []  # none left


def test_rejudging_takes_several_statuses_and_refuses_what_it_cannot_judge_or_other_settings(cli, tmp_path):
    files_run(cli, tmp_path)
    fixed = FakeJudge()
    cli.judge(fixed)
    assert cli("run", "--run", "r", "--rejudge", "rejected,incorrect").exit_code == 0
    assert sorted(call[0] for call in fixed.calls) == ["level1/p1", "level1/p2", "level1/p3"]
    refused = {
        ("--rejudge", "missing"): "not a status a judged solution has",
        ("--rejudge", "rejected", "--policy", "strict"): "policy: stored 'lenient', now 'strict'",
        ("--rejudge", "rejected", "--problems", "level1"): "leave out --problems",
    }
    for options, message in refused.items():
        done = cli("run", "--run", "r", *options)
        assert done.exit_code == 2 and message in done.output, done.output
    unknown = cli("run", "--run", "nothing", "--rejudge", "rejected")
    assert unknown.exit_code == 2 and "no run named 'nothing'" in unknown.output


def test_an_interrupted_rejudging_keeps_one_verdict_per_sample_and_finishes_when_run_again(cli, tmp_path):
    files_run(cli, tmp_path)
    cli.judge(FakeJudge(fail_after=1))
    assert cli("run", "--run", "r", "--rejudge", "rejected").exit_code == 130
    with Store(tmp_path / "kbench.db") as store:
        statuses = {e.problem_id: e.status for e in store.evaluations("r")}
        assert (statuses["level1/p1"], statuses["level1/p2"]) == ("correct", "rejected")
        assert len(store.superseded("r")) == 1
    rest = FakeJudge()
    cli.judge(rest)
    assert cli("run", "--run", "r", "--rejudge", "rejected").exit_code == 0
    assert [call[0] for call in rest.calls] == ["level1/p2"]


def test_rejudging_a_model_run_judges_its_stored_solution_without_asking_the_model(cli, tmp_path):
    """No provider is made (no API key is set), and the turns keep what the model was told."""
    problems = problem_dir(tmp_path / "problems", ["relu"])
    plan = runner.plan_generated(runner.select_problems([str(problems)]), 1, "openai/test-model")
    config = runner.generated_config(plan, selection=[str(problems)], model="openai/test-model", source="openai",
                                     samples=1, turns=1, generation={}, device="cpu", size="small", trials=2,
                                     timeout=60.0)
    source = "# fake: correct 1.7\nclass ModelNew: pass\n"
    sha = Solution(source).sha256
    with Store(tmp_path / "kbench.db") as store:
        store.create_run(RunRecord("gen", "now", config), [runner._problem_record(plan.problems[0], 0)],
                         plan.samples, Manifest(config=config))
        store.record_turn("gen", TurnRecord("level1/relu", 0, 1, 1, "prompt", {}, "reply", None, source, sha, {},
                                            status="rejected", reason="trusted-clock: noise"))
        rejected = EvaluationRecord("level1/relu", 0, "rejected", False, "trusted-clock: noise", turn=1)
        store.finish_sample("gen", SampleRecord("level1/relu", 0, "sample_0/turn_1", "openai/test-model", sha, source),
                            rejected)
    fixed = FakeJudge()
    cli.judge(fixed)
    done = cli("run", "--run", "gen", "--rejudge", "rejected")
    assert done.exit_code == 0, done.output
    assert fixed.calls == [("level1/relu", "turn_1.py")]
    with Store(tmp_path / "kbench.db") as store:
        (outcome,) = store.evaluations("gen")
        assert (outcome.status, outcome.turn, outcome.session) == ("correct", 1, 2)
        assert [t.status for t in store.turns("gen")] == ["rejected"]
        assert [e.status for e in store.superseded("gen")] == ["rejected"]


def test_statuses_are_parsed_and_checked():
    assert rejudge.parse_statuses("rejected, infra_error") == {"rejected", "infra_error"}
    for text in ("", "no_code", "pending"):
        with pytest.raises(runner.RunError):
            rejudge.parse_statuses(text)


def test_compare_and_the_report_mark_a_flip_of_the_same_solution(cli, tmp_path):
    """The same files judged by the defective judge (r) and a fixed one (s), with p3's file
    fixed in between: p1 and p2 flip on the same solution, p3 on a changed one."""
    problems, solutions = files_run(cli, tmp_path)
    fake_solution(solutions / "p3.py", "correct 1.1")
    cli.judge(FakeJudge())
    assert cli("run", "--run", "s", "--solutions", str(solutions), "--problems", str(problems)).exit_code == 0
    document = json.loads(cli("compare", "r", "s", "--json").output)
    assert {f["problem"]: f["same_solution"] for f in document["flipped"]} == {
        "level1/p1": True, "level1/p2": True, "level1/p3": False}
    text = cli("compare", "r", "s").output
    assert "2 of them with the same solution" in text
    assert [("same solution" in line) for line in text.splitlines()
            if "level1/p" in line] == [True, True, False]
    pytest.importorskip("plotly")
    assert cli("report", "r", "s", "-o", str(tmp_path / "r.html"), "--resamples", "200").exit_code == 0
    page = (tmp_path / "r.html").read_text()
    flips = page[page.index("Problems whose status flipped"):]
    rows = flips[: flips.index("</table>")].split("<tr>")[2:]
    assert [("same solution" in row) for row in rows] == [True, True, False]
