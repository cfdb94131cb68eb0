import pytest
import torch

from kbench.judge.trusted.compare import compare_outputs

CPU = {"output": "cpu"}


def check(expected, actual, expected_devices=CPU, actual_devices=CPU, overrides=None):
    return compare_outputs(expected, actual, expected_devices, actual_devices, overrides)


def test_equal_outputs_pass_with_zero_error():
    x = torch.randn(8, 8)
    result = check(x, x.clone())
    assert result.ok and result.max_abs_error == 0.0


@pytest.mark.parametrize(
    "actual, failed_check",
    [
        (torch.ones(4, 3), "shape"),
        (torch.ones(3, 4, dtype=torch.float64), "dtype"),
        ((torch.ones(3, 4),), "structure"),
        (3.0, "type"),
    ],
)
def test_each_mismatch_names_its_check(actual, failed_check):
    assert check(torch.ones(3, 4), actual).check == failed_check


def test_device_mismatch_is_caught_from_what_each_process_reported():
    x = torch.ones(2)
    assert check(x, x, {"output": "cuda:0"}, {"output": "cpu"}).check == "device"


def test_nan_only_passes_where_the_reference_has_nan():
    expected = torch.tensor([1.0, float("nan"), float("inf")])
    assert check(expected, expected.clone()).ok
    bad = expected.clone()
    bad[0] = float("nan")
    result = check(expected, bad)
    assert (result.ok, result.check) == (False, "finite")
    wrong_inf = expected.clone()
    wrong_inf[2] = float("-inf")
    assert check(expected, wrong_inf).check == "finite"


def test_fp32_tolerance_is_1e4_and_the_reason_reports_the_errors():
    expected = torch.full((10,), 1.0)
    assert check(expected, expected + 5e-5).ok
    result = check(expected, expected + 1e-3)
    assert result.check == "values"
    assert result.max_abs_error == pytest.approx(1e-3, rel=1e-3)
    assert "max abs error" in result.detail and "max rel error" in result.detail


def test_all_zeros_fail_against_a_nonzero_reference():
    assert not check(torch.randn(100), torch.zeros(100)).ok


def test_half_precision_gets_a_looser_tolerance_and_problems_may_override():
    expected = torch.ones(4, dtype=torch.bfloat16)
    assert check(expected, expected + 0.0078125).ok
    looser = {"float32": {"atol": 1e-2}}
    assert check(torch.ones(4), torch.ones(4) + 5e-3, overrides=looser).ok


def test_integer_outputs_must_match_exactly():
    expected = torch.tensor([1, 2, 3])
    assert check(expected, expected.clone()).ok
    assert check(expected, torch.tensor([1, 2, 4])).check == "values"


def test_nested_outputs_are_compared_leaf_by_leaf():
    expected = {"a": torch.ones(2), "b": (torch.zeros(3), 7)}
    assert check(expected, {"a": torch.ones(2), "b": (torch.zeros(3), 7)},
                 {"output['a']": "cpu", "output['b'][0]": "cpu"},
                 {"output['a']": "cpu", "output['b'][0]": "cpu"}).ok
    result = check(expected, {"a": torch.ones(2), "b": (torch.zeros(3), 8)},
                   {"output['a']": "cpu", "output['b'][0]": "cpu"},
                   {"output['a']": "cpu", "output['b'][0]": "cpu"})
    assert result.check == "value"


def test_a_verdict_with_infinite_and_nan_errors_is_strict_json_and_reads_back():
    import json
    import math

    from kbench.core.verdict import Trial, Verdict

    verdict = Verdict(
        problem="p", problem_path="p.py", problem_sha256="0", solution_path=None, solution_sha256="1",
        device="cpu", size="small", status="incorrect", correct=False, reason="trial 0: values",
        trials=[Trial(index=0, ok=False, check="values", detail="", max_abs_error=1.0, max_rel_error=math.inf)],
        max_abs_error=math.nan, max_rel_error=math.inf,
    )
    data = json.loads(verdict.to_json(), parse_constant=lambda name: pytest.fail(f"non-standard JSON {name}"))
    assert float(data["max_rel_error"]) == math.inf and math.isnan(float(data["max_abs_error"]))
    assert float(data["trials"][0]["max_rel_error"]) == math.inf


def test_an_error_where_the_expected_value_is_0_reads_as_an_absolute_error():
    expected = torch.tensor([0.0, 1.0, 2.0])
    result = check(expected, torch.tensor([0.5, 1.0, 2.0]))
    assert result.check == "values" and result.max_abs_error == 0.5
    assert "max abs error 0.5 (where the expected value is 0)" in result.detail
    # the relative error leaves out the expected 0 (no 1e+37), and says over which elements it is taken
    assert result.max_rel_error == 0.0 and "max rel error 0 (where |expected| >= atol)" in result.detail
    all_zero = check(torch.zeros(3), torch.full((3,), 0.5))
    assert all_zero.max_rel_error is None
    assert "no relative error (no element with |expected| >= atol)" in all_zero.detail
