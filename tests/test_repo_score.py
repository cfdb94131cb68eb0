"""The repository track scored apart: its figures (solved, faster than base, geometric-mean
speedup, fraction of the expert, with intervals), `kbench score`, `compare` refusing across
tracks, exports and the report's own section. Verdicts are constructed (track "repo"); nothing
is judged here."""

import json
import math
from dataclasses import replace

import pytest
from repo_run_fixtures import repo_run, repo_verdict, save
from run_fixtures import run_data
from typer.testing import CliRunner

from kbench.cli import app
from kbench.runs import export
from kbench.runs.repo_comparison import compare_repo
from kbench.runs.repo_score import SOLVED_SHARE, repo_score
from kbench.runs.score import outcomes
from kbench.runs.store import Store

RESAMPLES = 300


def scored(spec, **changes):
    return repo_score(outcomes(repo_run(spec, **changes)), resamples=RESAMPLES)


def test_solved_counts_the_interval_lower_bound_against_095_of_the_expert():
    expert = 2.0
    at, below = SOLVED_SHARE * expert, SOLVED_SHARE * expert - 0.01
    result = scored([
        ("r/at", [("correct", 2.1, at, expert)]),  # lower bound exactly 0.95 x expert: solved
        ("r/below", [("correct", 2.1, below, expert)]),  # point estimate above the expert, bound just below: not
        ("r/wrong", [("incorrect", None, None, expert)]),
        ("r/missing", None),
    ]).overall
    assert result.solved.value == pytest.approx(1 / 4)
    assert result.correct_rate.value == pytest.approx(2 / 4)


def test_faster_than_base_needs_the_lower_bound_above_one():
    result = scored([
        ("r/a", [("correct", 1.2, 1.01)]),
        ("r/b", [("correct", 1.2, 0.99)]),  # faster at the median, not surely
        ("r/c", [("correct", 0.9, 0.85)]),
    ]).overall
    assert result.faster_than_base.value == pytest.approx(1 / 3)


def test_every_task_is_in_the_geometric_mean_a_failure_as_the_base_revision():
    result = scored([
        ("r/a", [("correct", 4.0, 3.5, 4.0)]),
        ("r/b", [("compile_error",)]),
        ("r/c", None),
        ("r/d", ["pending"]),
    ]).overall
    # 4, 1, 1, 1: geometric mean 4 ** (1/4); the fraction of the expert 4/4, then 0 for each failure
    assert result.geomean_speedup.value == pytest.approx(4 ** 0.25)
    assert result.mean_fraction_of_expert.value == pytest.approx(1 / 4)
    assert result.expert_unknown == 0
    assert result.coverage.problems == 4 and result.coverage.with_solution == 3 and result.coverage.evaluated == 3
    assert result.statuses == {"correct": 1, "compile_error": 1, "missing": 1, "pending": 1}
    low, high = result.geomean_speedup.low, result.geomean_speedup.high
    assert low <= result.geomean_speedup.value <= high and low >= 1.0


def test_a_correct_patch_without_an_expert_speedup_is_never_solved_and_left_out_of_the_fraction():
    result = scored([
        ("r/known", [("correct", 3.0, 2.9, 3.0)]),
        ("r/unknown", [("correct", 3.0, 2.9, None)]),  # the expert patch failed where this one was judged
        ("r/failed", [("incorrect", None, None, None)]),  # a failure needs no expert speedup: 0
    ]).overall
    assert result.solved.value == pytest.approx(1 / 3)
    assert result.expert_unknown == 1
    assert result.mean_fraction_of_expert.value == pytest.approx(0.5)


def test_several_samples_share_their_task_and_repositories_are_groups():
    result = scored([
        ("tinylm/a", [("correct", 2.0, 1.9, 2.0), ("incorrect",)]),
        ("tinylm/b", [("correct", 1.0, 0.95, 2.0), ("correct", 1.0, 0.95, 2.0)]),
        ("points/c", [("correct", 3.0, 2.95, 3.0)]),
    ])
    assert set(result.groups) == {"all", "tinylm", "points"}
    assert result.groups["tinylm"].solved.value == pytest.approx(0.25)
    assert result.groups["points"].solved.value == 1.0
    assert result.overall.solved.value == pytest.approx((0.5 + 0 + 1) / 3)
    # tinylm/a: the mean log of 2 and 1 (the incorrect sample as the base revision)
    assert result.groups["tinylm"].geomean_speedup.value == pytest.approx(math.exp((math.log(2) / 2 + 0) / 2))


def test_replayed_experts_score_solved_and_do_nothing_patches_none():
    experts = scored([(f"r/t{i}", [("correct", 1.5 + i / 10, 1.45 + i / 10, 1.5 + i / 10)]) for i in range(4)])
    nothing = scored([(f"r/t{i}", [("correct", 1.0, 0.97, 1.5 + i / 10)]) for i in range(4)])
    assert experts.overall.solved.value == 1.0 and experts.overall.faster_than_base.value == 1.0
    assert nothing.overall.solved.value == 0.0 and nothing.overall.faster_than_base.value == 0.0
    assert nothing.overall.correct_rate.value == 1.0


def test_the_paired_comparison_of_two_repo_runs():
    a = repo_run([("r/a", [("incorrect",)]), ("r/b", [("correct", 2.0, 1.9, 2.0)]), ("r/c", None)], name="a")
    b = repo_run([("r/a", [("correct", 2.0, 1.95, 2.0)]), ("r/b", [("correct", 2.0, 1.9, 2.0)]),
                  ("r/d", None)], name="b")
    result = compare_repo(outcomes(a), outcomes(b), resamples=RESAMPLES)
    assert result.n_tasks == 2 and result.only_a == ["r/c"] and result.only_b == ["r/d"]
    assert result.differences["solved"].a == 0.5 and result.differences["solved"].b == 1.0
    assert result.differences["solved"].difference.value == pytest.approx(0.5)
    assert [(f.problem_id, f.status_a, f.status_b) for f in result.flipped] == [("r/a", "incorrect", "correct")]


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "kbench.db"
    with Store(path) as store:
        save(store, repo_run([("tinylm/a", [("correct", 2.0, 1.95, 2.0)]), ("tinylm/b", [("incorrect",)])],
                             name="repo-a"))
        save(store, repo_run([("tinylm/a", [("correct", 1.0, 0.98, 2.0)]), ("tinylm/b", [("correct", 1.5, 1.45,
                                                                                                    1.5)])],
                             name="repo-b"))
        kernel = run_data([("level1/relu", 1, [("correct", 1.5)])], name="kernel")
        store.create_run(kernel.run, kernel.problems, kernel.samples, kernel.sessions[0].manifest)
        for evaluation in kernel.evaluations:
            store.record("kernel", evaluation)
    return path


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def test_kbench_score_gives_a_repo_run_its_own_table(store_path):
    done = cli("score", "repo-a", "--db", store_path, "--resamples", RESAMPLES)
    assert done.exit_code == 0, done.output
    assert "repository track" in done.output and "solved" in done.output and "fast_p" not in done.output
    document = json.loads(cli("score", "repo-a", "--db", store_path, "--json", "--resamples", RESAMPLES).output)
    assert document["track"] == "repo" and document["n_tasks"] == 2
    assert document["solved"] == 0.5 and document["correct_rate"] == 0.5 and len(document["solved_ci"]) == 2
    assert document["manifest"]["tasks"]["tinylm/a"]["commit"] == "c" * 40
    assert "fast_p" not in document
    kernel = json.loads(cli("score", "kernel", "--db", store_path, "--json", "--resamples", RESAMPLES).output)
    assert "fast_p" in kernel and "solved" not in kernel


def test_compare_refuses_runs_of_different_tracks_in_one_line(store_path):
    for force in ((), ("--force",)):
        done = cli("compare", "kernel", "repo-a", "--db", store_path, *force)
        assert done.exit_code == 2
        message = done.output.strip()
        assert "\n" not in message and "kernel track" in message and "repo track" in message
    done = cli("compare", "repo-a", "repo-b", "--db", store_path, "--json", "--resamples", RESAMPLES)
    assert done.exit_code == 0, done.output
    document = json.loads(done.output)
    assert document["track"] == "repo" and document["solved"]["a"] == 0.5 and document["solved"]["b"] == 0.5
    assert document["correct_rate"]["difference"] == 0.5
    text = cli("compare", "repo-a", "repo-b", "--db", store_path, "--resamples", RESAMPLES).output
    assert "tinylm/b" in text and "solved" in text


def test_exports_carry_the_track_and_kernelbenchs_layout_refuses_tasks(store_path, tmp_path):
    with Store(store_path) as store:
        data = store.load("repo-a")
    rows = export.rows(data)
    assert {row["track"] for row in rows} == {"repo"}
    done = cli("export", "repo-a", "--db", store_path, "-o", "-")
    header, *lines = [json.loads(line) for line in done.output.splitlines()]
    assert header["config"]["track"] == "repo" and all(line["track"] == "repo" for line in lines)
    done = cli("export", "repo-a", "--db", store_path, "--format", "kernelbench", "-o", tmp_path / "e.json")
    assert done.exit_code == 2 and "repo track" in done.output


def test_the_report_shows_the_repository_track_in_its_own_section(store_path, tmp_path):
    pytest.importorskip("plotly")
    output = tmp_path / "report.html"
    done = cli("report", "kernel", "repo-a", "repo-b", "--store", store_path, "-o", output,
               "--resamples", RESAMPLES)
    assert done.exit_code == 0, done.output
    html = output.read_text()
    kernel_part, repo_part = html.split('<h2 id="repository-track">')
    assert "fast_p" in kernel_part and "level1/relu" in kernel_part and "tinylm/a" not in kernel_part
    assert "tinylm/a" in repo_part and "solved" in repo_part and "level1/relu" not in repo_part.split("<script>")[0]
    assert "Comparison: repo-b" in repo_part and "Comparison: repo-a" not in html  # no comparison across tracks
    assert "c" * 12 in repo_part  # the pinned revision
    only_repo = tmp_path / "repo.html"
    done = cli("report", "repo-a", "--store", store_path, "-o", only_repo, "--resamples", RESAMPLES)
    assert done.exit_code == 0, done.output
    assert "repository-track" in only_repo.read_text() and "fast_p over" not in only_repo.read_text()


# --- on a CPU no task is solved or unsolved (issue 59) ------------------------------------------

CPU_RUN = [("tinylm/a", [("correct", 130.0, 120.0, 0.009)]), ("tinylm/b", [("correct", 1.0, 0.97, 0.01)])]


def test_on_a_cpu_solved_and_the_fraction_of_the_expert_are_not_claimed():
    """On a CPU the expert runs through Triton's interpreter (about 0.01x the base): a do-nothing patch
    would reach 100 times the expert's speedup. Neither figure is given, and the JSON says why."""
    cpu = repo_score(outcomes(repo_run(CPU_RUN, device="cpu", size="small")), resamples=RESAMPLES, cpu=True)
    assert cpu.overall.solved.value is None and cpu.overall.mean_fraction_of_expert.value is None
    assert cpu.overall.correct_rate.value == 1.0  # what a CPU does say
    document = cpu.to_dict()
    assert document["solved"] is None and "not meaningful on a CPU" in document["not_meaningful"]["why"]
    gpu = repo_score(outcomes(repo_run(CPU_RUN)), resamples=RESAMPLES)  # the same numbers from a GPU: claimed
    assert gpu.overall.solved.value == 1.0 and "not_meaningful" not in gpu.to_dict()
    a = repo_run(CPU_RUN, name="a", device="cpu", size="small")
    assert "solved" not in compare_repo(outcomes(a), outcomes(a), resamples=RESAMPLES, cpu=True).differences


def test_a_cpu_verdict_makes_no_solved_claim_and_says_why():
    from kbench.repo import solved
    from kbench.repo.expert import expert_record
    verdict = repo_verdict("r/a", "correct", 130.0, 120.0, None, device="cpu")
    verdict = replace(verdict, speedup={"base": 130.0, "expert": 120.0}, speedup_interval={"expert": [110.0, 130.0]})
    stripped, record = expert_record(verdict)
    assert record["solved"] is None and record["meaningful"] is False and "CPU" in record["note"]
    assert solved(replace(stripped, expert=record)) is None
    gpu = replace(verdict, device="cuda:0")
    assert expert_record(gpu)[1]["solved"] is True and solved(replace(gpu, expert=expert_record(gpu)[1])) is True


def test_score_and_the_report_of_a_cpu_run_say_not_meaningful(tmp_path):
    path = tmp_path / "kbench.db"
    with Store(path) as store:
        save(store, repo_run(CPU_RUN, name="cpu-run", device="cpu", size="small"))
    text = cli("score", "cpu-run", "--db", path, "--resamples", RESAMPLES).output
    assert "not meaningful on a CPU" in text
    document = json.loads(cli("score", "cpu-run", "--db", path, "--json", "--resamples", RESAMPLES).output)
    assert document["solved"] is None and document["mean_fraction_of_expert"] is None
    assert document["not_meaningful"]["not_claimed"] == ["solved", "mean_fraction_of_expert"]
    pytest.importorskip("plotly")
    output = tmp_path / "report.html"
    assert cli("report", "cpu-run", "--store", path, "-o", output, "--resamples", RESAMPLES).exit_code == 0
    repo_part = output.read_text().split('<h2 id="repository-track">')[1]
    assert repo_part.count("not meaningful on a CPU") >= 3  # two figures and each patch's row
    assert "<td>solved</td>" not in repo_part  # no row says solved
