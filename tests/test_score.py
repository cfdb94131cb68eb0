"""Scores from hand-made runs whose answers are worked out by hand in the comments."""

import itertools
import json
import math
from dataclasses import replace

import pytest
from run_fixtures import run_data

from kbench.runs.comparison import compare, mismatches
from kbench.runs.score import ALL, P_VALUES, bootstrap_mean, columns_of, outcomes, score, unbiased_at_k

# Level 1: A correct at 2x, B correct at 0.5x, C incorrect. Level 2: D missing, E correct at exactly 1x.
FIVE = run_data(
    [
        ("A", 1, [("correct", 2.0)]),
        ("B", 1, [("correct", 0.5)]),
        ("C", 1, [("incorrect", None)]),
        ("D", 2, None),
        ("E", 2, [("correct", 1.0)]),
    ]
)


def five_score(**kwargs):
    return score(outcomes(FIVE), columns_of(FIVE), **kwargs)


def test_fast_p_counts_failures_and_missing_solutions_in_the_denominator():
    fast = five_score().overall.fast_p["eager"]
    # speedup > p, strictly: p=0: A, B, E; p=0.5: A, E (B is not > 0.5); p=0.8: A, E;
    # p=1: A (E is not > 1); p=1.5: A; p=2: nobody. Always over all 5 problems.
    expected = {0.0: 3 / 5, 0.5: 2 / 5, 0.8: 2 / 5, 1.0: 1 / 5, 1.5: 1 / 5, 2.0: 0.0}
    assert {p: fast[p].value for p in P_VALUES} == pytest.approx(expected)


def test_correct_rate_geomean_failures_and_coverage():
    overall = five_score().overall
    assert overall.n_problems == 5
    assert overall.correct_rate.value == pytest.approx(3 / 5)
    # exp((ln 2 + ln 0.5 + ln 1) / 3) = 1, over the correct solutions only.
    assert overall.geomean_speedup["eager"].value == pytest.approx(1.0)
    assert overall.failures == {"incorrect": 1, "missing": 1}
    cov = overall.coverage
    assert (cov.problems, cov.with_solution, cov.evaluated, cov.samples, cov.samples_evaluated) == (5, 4, 5, 4, 4)


def test_per_level_scores():
    groups = five_score().groups
    assert list(groups) == [ALL, "1", "2"]
    assert groups["1"].fast_p["eager"][0.0].value == pytest.approx(2 / 3)
    assert groups["1"].fast_p["eager"][1.0].value == pytest.approx(1 / 3)
    assert groups["2"].correct_rate.value == pytest.approx(1 / 2)
    assert groups["2"].fast_p["eager"][1.0].value == 0.0


def test_json_shape_has_the_required_keys():
    document = five_score().to_dict()
    assert document["n_problems"] == 5
    assert document["correct_rate"] == pytest.approx(0.6)
    assert set(document["fast_p"]["eager"]) == {"0", "0.5", "0.8", "1", "1.5", "2"}
    assert document["fast_p"]["eager"]["1"] == pytest.approx(0.2)
    assert document["levels"]["1"]["fast_p"]["eager"]["0"] == pytest.approx(2 / 3)
    low, high = document["fast_p_ci"]["eager"]["0"]
    assert low <= 0.6 <= high


def test_pending_samples_count_as_failures_and_lower_coverage():
    run = run_data([("A", 1, [("correct", 3.0)]), ("B", 1, ["pending"])])
    overall = score(outcomes(run), ("eager",)).overall
    assert overall.fast_p["eager"][1.0].value == pytest.approx(1 / 2)
    assert overall.coverage.evaluated == 1 and overall.statuses["pending"] == 1


def test_unbiased_estimator_small_cases_by_hand():
    assert unbiased_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert unbiased_at_k(4, 1, 2) == pytest.approx(1 - 3 / 6)  # 1 - C(3,2)/C(4,2)
    assert unbiased_at_k(4, 0, 3) == 0.0
    assert unbiased_at_k(4, 2, 3) == 1.0  # any 3 of 4 include a success
    assert unbiased_at_k(7, 3, 1) == pytest.approx(3 / 7)


@pytest.mark.parametrize("n, c, k", [(6, 2, 3), (5, 1, 2), (8, 3, 4)])
def test_unbiased_estimator_equals_enumeration_of_all_draws(n, c, k):
    successes = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(successes, k))
    assert unbiased_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))


def test_fast_p_at_k_with_several_samples():
    # X: 4 samples, correct at 1.2x and 0.9x, then two failures. Y: 4 failures. Z: missing.
    run = run_data(
        [
            ("X", 1, [("correct", 1.2), ("correct", 0.9), ("incorrect", None), ("runtime_error", None)]),
            ("Y", 1, [("incorrect", None)] * 4),
            ("Z", 1, None),
        ]
    )
    result = score(outcomes(run), ("eager",))
    assert result.ks == (1, 2, 4)
    at_k = result.overall.fast_p_at_k["eager"]
    # p=1: X has c=1 of n=4: @1 = 1/4, @2 = 1 - C(3,2)/C(4,2) = 1/2, @4 = 1; Y and Z give 0.
    assert at_k[1][1.0].value == pytest.approx(1 / 12)
    assert at_k[2][1.0].value == pytest.approx(1 / 6)
    assert at_k[4][1.0].value == pytest.approx(1 / 3)
    # p=0: X has c=2: @2 = 1 - C(2,2)/C(4,2) = 5/6.
    assert at_k[2][0.0].value == pytest.approx(5 / 18)
    # fast_p itself is fast_p@1: the share of a problem's samples that succeed.
    assert result.overall.fast_p["eager"][0.0].value == pytest.approx(at_k[1][0.0].value)
    assert result.overall.correct_rate.value == pytest.approx((2 / 4) / 3)


def test_no_fast_p_at_k_with_one_sample_per_problem():
    assert five_score().ks == ()


def test_bootstrap_interval_holds_the_estimate_and_repeats_with_its_seed():
    values = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0.5, 0.25]
    first = bootstrap_mean(values, seed=7)
    assert first.low <= first.value <= first.high
    assert first.value == pytest.approx(sum(values) / len(values))
    assert 0 <= first.low < first.high <= 1
    assert bootstrap_mean(values, seed=7) == first
    spread = [0.13, 0.92, 0.41, 0.77, 0.05, 0.66, 0.38, 0.21]
    assert bootstrap_mean(spread, resamples=200, seed=1) != bootstrap_mean(spread, resamples=200, seed=2)
    assert five_score(seed=3) == five_score(seed=3)


def test_bootstrap_of_a_constant_is_that_constant():
    estimate = bootstrap_mean([0.5] * 10)
    assert (estimate.low, estimate.value, estimate.high) == (0.5, 0.5, 0.5)


def test_geomean_is_undefined_without_a_correct_solution():
    run = run_data([("A", 1, [("incorrect", None)]), ("B", 1, None)])
    assert score(outcomes(run), ("eager",)).overall.geomean_speedup["eager"].value is None


def test_scores_cover_every_baseline_column_present():
    run = run_data([("A", 1, [("correct", 2.0)])])
    run.evaluations[0].speedup["compile"] = 0.5
    result = score(outcomes(run), columns_of(run))
    assert result.columns == ("eager", "compile")
    assert result.overall.fast_p["compile"][1.0].value == 0.0
    assert result.overall.fast_p["eager"][1.0].value == 1.0


def test_paired_comparison_on_shared_problems():
    a = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("incorrect", None)]), ("R", 2, None),
                  ("S", 2, [("correct", 1.5)]), ("OnlyA", 1, None)])
    b = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("correct", 1.2)]), ("R", 2, [("correct", 0.5)]),
                  ("S", 2, [("incorrect", None)]), ("OnlyB", 1, None)])
    result = compare(outcomes(a), outcomes(b), ("eager",))
    assert result.only_a == ["OnlyA"] and result.only_b == ["OnlyB"] and result.changed == []
    overall = result.groups[ALL]
    assert overall.n_problems == 4
    # correct: A has P, S (2/4); B has P, Q, R (3/4): +1/4. fast_1: A has P, S; B has P, Q: 0.
    assert overall.correct_rate.difference.value == pytest.approx(0.25)
    assert (overall.correct_rate.a, overall.correct_rate.b) == (pytest.approx(0.5), pytest.approx(0.75))
    fast_1 = overall.fast_p["eager"][1.0].difference
    assert fast_1.value == pytest.approx(0.0) and fast_1.low < 0 < fast_1.high
    assert result.groups["1"].fast_p["eager"][1.0].difference.value == pytest.approx(0.5)  # Q became fast
    assert result.groups["2"].fast_p["eager"][1.0].difference.value == pytest.approx(-0.5)  # S broke


def test_comparison_leaves_out_problems_whose_content_changed():
    a = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("correct", 2.0)])])
    b = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("incorrect", None)])])
    changed = [p for p in outcomes(b)]
    changed[1] = type(changed[1])(**{**changed[1].__dict__, "sha256": "edited"})
    result = compare(outcomes(a), changed, ("eager",))
    assert result.changed == ["Q"] and result.groups[ALL].n_problems == 1
    assert math.isclose(result.groups[ALL].correct_rate.difference.value, 0.0)


def test_runs_without_shared_problems_compare_to_nothing():
    result = compare(outcomes(run_data([("P", 1, None)])), outcomes(run_data([("Q", 1, None)])), ("eager",))
    assert result.groups == {} and result.to_dict()["n_problems"] == 0


def test_comparison_lists_flipped_problems_with_both_figures():
    a = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("incorrect", None)]), ("R", 1, [("correct", 1.5)])])
    b = run_data([("P", 1, [("correct", 3.0)]), ("Q", 1, [("correct", 1.2)]), ("R", 1, [("incorrect", None)])])
    flipped = {flip.problem_id: flip for flip in compare(outcomes(a), outcomes(b), ("eager",)).flipped}
    assert set(flipped) == {"Q", "R"}  # P stayed correct, only faster
    assert (flipped["Q"].status_a, flipped["Q"].status_b) == ("incorrect", "correct")
    assert flipped["Q"].speedup_b == {"eager": pytest.approx(1.2)} and flipped["Q"].speedup_change("eager") is None
    assert flipped["R"].to_dict()["correct"] == {"a": 1.0, "b": 0.0, "difference": -1.0}


def test_runs_measured_differently_are_listed_as_mismatched():
    a = run_data([("P", 1, [("correct", 2.0)])])
    assert mismatches(a, run_data([("P", 1, [("correct", 1.0)])])) == []  # other solutions: what is compared
    config = replace(a.run.config, dtype="bfloat16", generation={"model": "m2", "template": {"sha256": "t2"}})
    manifest = replace(a.sessions[0].manifest, gpu_name="NVIDIA H100", torch="2.12")
    b = replace(a, run=replace(a.run, config=config), sessions=[replace(a.sessions[0], manifest=manifest)])
    found = {m.name: (m.a, m.b) for m in mismatches(a, b)}
    assert found == {"dtype": (("float32",), ("bfloat16",)), "gpu_name": ((None,), ("NVIDIA H100",)),
                     "torch": ((None,), ("2.12",)), "prompt template": ((None,), ("t2",))}


def test_a_resumed_run_whose_environment_changed_compares_with_every_value():
    a = run_data([("P", 1, [("correct", 2.0)])])
    later = replace(a.sessions[0], number=2, manifest=replace(a.sessions[0].manifest, gpu_driver="580"))
    b = replace(a, sessions=[a.sessions[0], later])
    assert [(m.name, m.a, m.b) for m in mismatches(a, b)] == [("gpu_driver", (None,), (None, "580"))]


def test_conservative_fast_p_counts_a_candidate_only_when_its_interval_clears_p():
    run = run_data([("A", 1, [("correct", 2.0)]), ("B", 1, [("correct", 1.1)]), ("C", 1, [("correct", 1.05)])])
    intervals = {"A": [1.8, 2.2], "B": [0.9, 1.3]}  # C's verdict carries none: it never counts
    run = replace(run, evaluations=[
        replace(e, verdict={**e.verdict, "speedup_interval": {"eager": intervals[e.problem_id]}})
        if e.problem_id in intervals else e for e in run.evaluations])
    overall = score(outcomes(run), ("eager",)).overall
    assert overall.fast_p["eager"][1.0].value == pytest.approx(1.0)
    assert overall.fast_p_conservative["eager"][1.0].value == pytest.approx(1 / 3)  # A: 1.8 > 1
    assert overall.fast_p_conservative["eager"][0.8].value == pytest.approx(2 / 3)  # and B: 0.9 > 0.8
    assert score(outcomes(run), ("eager",)).to_dict()["fast_p_conservative"]["eager"]["0.8"] == pytest.approx(2 / 3)


def test_score_opens_with_fast_1_over_torch_compile_per_level_on_the_named_gpu():
    from rich.console import Console

    from kbench.cli.scores import print_score

    run = run_data([("A", 1, [("correct", 2.0)]), ("B", 2, [("correct", 3.0)])])
    run.evaluations[0].speedup["compile"] = 1.5
    run.evaluations[1].speedup["compile"] = 0.9
    run = replace(run, sessions=[replace(run.sessions[0], manifest=replace(run.sessions[0].manifest,
                                                                           gpu_name="NVIDIA H200"))])
    out = Console(record=True, width=200)
    print_score(out, run, score(outcomes(run), columns_of(run)))
    lines = out.export_text().splitlines()
    published = next(i for i, line in enumerate(lines) if line.startswith("fast_1 over torch.compile"))
    assert published <= 1 and "on NVIDIA H200" in lines[published]
    assert "all 0.500" in lines[published] and "level 1 1.000" in lines[published] and "level 2 0.000" in lines[published]


# Two correct samples, both 2x faster than eager: K with its own kernels only, M mixed (a style
# rule flagged it: PyTorch computing beside its kernel, which the default policy only flags).
MIXED = run_data([("K", 1, [("correct", 2.0)]), ("M", 1, [("correct", 2.0, "torch-compute")])])


def test_kernels_only_counts_correct_solutions_without_a_style_flag_beside_the_headline():
    overall = score(outcomes(MIXED), columns_of(MIXED)).overall
    assert overall.correct_rate.value == 1.0  # the headline counts every correct solution: 2/2
    assert {p: e.value for p, e in overall.fast_p["eager"].items()} == pytest.approx(
        {0.0: 1.0, 0.5: 1.0, 0.8: 1.0, 1.0: 1.0, 1.5: 1.0, 2.0: 0.0})
    assert overall.correct_rate_kernels_only.value == pytest.approx(0.5)  # kernels only: 1/2
    assert {p: e.value for p, e in overall.fast_p_kernels_only["eager"].items()} == pytest.approx(
        {0.0: 0.5, 0.5: 0.5, 0.8: 0.5, 1.0: 0.5, 1.5: 0.5, 2.0: 0.0})
    low, high = overall.fast_p_kernels_only["eager"][1.0].low, overall.fast_p_kernels_only["eager"][1.0].high
    assert low == 0.0 and high == 1.0  # a bootstrap over problems, as the headline's
    document = score(outcomes(MIXED), columns_of(MIXED)).to_dict()
    assert document["fast_p_kernels_only"]["eager"]["1"] == pytest.approx(0.5)
    assert document["correct_rate_kernels_only"] == pytest.approx(0.5)
    assert document["fast_p"]["eager"]["1"] == pytest.approx(1.0)


def test_flags_that_are_not_style_rules_keep_a_solution_among_the_kernels():
    """side-stream only ever flags (evidence for a reviewer); an incorrect mixed solution
    counts in neither figure."""
    run = run_data([("K", 1, [("correct", 2.0, "side-stream")]), ("M", 1, [("incorrect", None, "torch-compute")])])
    overall = score(outcomes(run), columns_of(run)).overall
    assert overall.correct_rate_kernels_only.value == overall.correct_rate.value == pytest.approx(0.5)
    assert overall.fast_p_kernels_only["eager"][1.0].value == overall.fast_p["eager"][1.0].value == pytest.approx(0.5)


def test_the_score_table_shows_kernels_only_beside_the_headline():
    from rich.console import Console

    from kbench.cli.scores import print_score

    out = Console(record=True, width=250)
    print_score(out, MIXED, score(outcomes(MIXED), columns_of(MIXED)))
    text = out.export_text()
    assert "policy lenient" in text.splitlines()[0]
    assert "correct, kernels only" in text and "all, kernels only" in text
    row = next(line for line in text.splitlines() if line.strip(" │|").startswith("1 "))  # the fast_p row p=1
    assert "1.000" in row and "0.500" in row, row


def test_a_flip_of_the_same_solution_is_marked_as_the_judges():
    a = run_data([("P", 1, [("rejected", None)]), ("Q", 1, [("incorrect", None)]), ("R", 1, [("correct", 1.5)])])
    b = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("correct", 1.2)]), ("R", 1, [("incorrect", None)])])
    # run_data gives every sample the source hash "x": Q's solution changed between the runs, R's is unknown.
    b = replace(b, samples=[replace(s, sha256="y") if s.problem_id == "Q" else s for s in b.samples])
    a = replace(a, samples=[replace(s, sha256="") if s.problem_id == "R" else s for s in a.samples])
    b = replace(b, samples=[replace(s, sha256="") if s.problem_id == "R" else s for s in b.samples])
    flipped = {flip.problem_id: flip for flip in compare(outcomes(a), outcomes(b), ("eager",)).flipped}
    assert {k: f.same_solution for k, f in flipped.items()} == {"P": True, "Q": False, "R": False}
    assert flipped["P"].to_dict()["same_solution"] is True


def test_the_per_turn_table_counts_status_flips_of_the_same_solution():
    from rich.console import Console
    from view_fixtures import generated_run

    from kbench.cli.scores import print_score, score_document
    from kbench.runs.score import same_solution_flips

    data = generated_run()  # turn 1 incorrect (source "bad"), turn 2 correct ("good"): the model's work
    assert same_solution_flips(data) == {2: 0}
    first, second = data.turns
    # A correct turn 1 falsely rejected, sent back unchanged and judged correct at turn 2.
    resent = replace(data, turns=[replace(first, status="rejected", source="good", sha256=second.sha256), second])
    assert same_solution_flips(resent) == {2: 1}
    out = Console(record=True, width=250)
    print_score(out, resent, score(outcomes(resent), columns_of(resent)))
    text = out.export_text()
    row = next(line for line in text.splitlines() if "status flips, same solution" in line)
    assert [cell.strip() for cell in row.strip(" │|").split("│")[1:]] == ["-", "1"], row
    assert "1 samples changed status between turns with the same solution" in text
    document = score_document(resent, score(outcomes(resent), columns_of(resent)))
    assert [document["by_turn"][t]["same_solution_flips"] for t in ("1", "2")] == [0, 1]


def test_speedups_timed_on_a_cpu_carry_their_note_wherever_a_score_shows_them(tmp_path):
    """Issue 59: on a CPU (Triton through its interpreter) a speedup means nothing, so score, compare
    and their JSON say so beside the figures; a GPU run's score carries no such note."""
    from typer.testing import CliRunner
    from view_fixtures import make_store

    from kbench.cli import app

    assert five_score(device="cuda:0").cpu_note is None and five_score(device="cuda:0").to_dict()["cpu_note"] is None
    assert "not meaningful on a CPU" in five_score(device="cpu").to_dict()["cpu_note"]
    store = make_store(tmp_path / "kbench.db")

    def kbench(*args):
        done = CliRunner().invoke(app, [*args, "--store", str(store), "--resamples", "200"], terminal_width=250)
        assert done.exit_code == 0, done.output
        return done.output

    assert "not meaningful on a CPU" in json.loads(kbench("score", "base", "--json"))["cpu_note"]
    text = kbench("score", "base")
    assert "note: not meaningful on a CPU" in text and "fast_p over eager; kernels only (correct with no style " \
        "flag) (not meaningful on a CPU)" in " ".join(text.split())
    assert "not meaningful on a CPU" in json.loads(kbench("compare", "base", "next", "--json"))["cpu_note"]
    compared = kbench("compare", "base", "next")
    assert "note: not meaningful on a CPU" in compared
    assert "paired difference B - A (not meaningful on a CPU)" in compared
    exported = CliRunner().invoke(app, ["export", "base", "-o", "-", "--store", str(store)])
    samples = [json.loads(line) for line in exported.output.splitlines()[1:]]
    assert samples and all("not meaningful on a CPU" in sample["cpu_note"] for sample in samples)
    shown = CliRunner().invoke(app, ["show", "base", "--store", str(store)]).output
    assert shown.splitlines()[0].endswith("; speedups not meaningful on a CPU")
