import torch

from kbench.judge.protocol.timing import FreshInputs, TimingSettings, measure, median_rel_error, seed_sequence


def draw(seed):
    torch.manual_seed(seed)
    return [torch.randn(64), torch.randint(0, 10, (5,)), 3]


def test_fresh_inputs_are_new_draws_every_call_and_repeat_for_the_same_seed():
    first, second = FreshInputs(draw, seed_sequence(7)), FreshInputs(draw, seed_sequence(7))
    calls = [first.next() for _ in range(3)]
    assert not torch.equal(calls[0][0], calls[1][0]) and not torch.equal(calls[1][0], calls[2][0])
    ratio = calls[1][0] / calls[0][0]
    assert not torch.allclose(ratio, ratio[0].expand_as(ratio))  # not a rescaled copy
    assert torch.equal(second.next()[0], calls[0][0])
    assert calls[0][1].dtype == torch.int64  # integers stay integers
    given = iter([5, 5, 6])
    from_judge = FreshInputs(draw, lambda: next(given))
    assert torch.equal(from_judge.next()[0], from_judge.next()[0])
    assert not torch.equal(from_judge.next()[0], draw(5)[0])


def test_median_rel_error_shrinks_with_more_samples_of_the_same_spread():
    few = [1.0, 1.1, 0.9, 1.05, 0.95] * 4
    many = few * 25
    assert median_rel_error(many) < median_rel_error(few)
    assert median_rel_error([1.0, 1.0]) == float("inf")


def test_measure_on_cpu_keeps_count_spread_and_stop_reason():
    settings = TimingSettings(min_calls=5, max_calls=40, budget_seconds=2.0, warmup_seconds=0.0)
    result = measure(lambda x, i, n: x * 2, FreshInputs(draw, seed_sequence(1)), torch.device("cpu"), settings)
    assert result.clock == "cpu-perf-counter"
    assert 5 <= result.count <= 40
    assert result.min_ms <= result.p25_ms <= result.median_ms <= result.p75_ms <= result.max_ms
    assert result.stop_reason in {"stable", "budget", "max_calls"}
    assert result.warmup_calls >= settings.warmup_calls
    assert result.settings["max_calls"] == 40
    assert 0 <= result.overhead_ms < result.median_ms  # the clock around an empty call, kept beside the numbers


def test_pooled_rounds_and_the_speedup_interval():
    from kbench.judge.protocol.repeatability import speedup_interval
    from kbench.judge.protocol.timing import pooled, summarize

    rounds = [summarize("cpu-perf-counter", [1.0, 1.1, 0.9], [1.0, 1.1, 0.9], 3, "stable", {}).to_dict(),
              summarize("cpu-perf-counter", [2.0, 2.1], [2.0, 2.1], 3, "stable", {}).to_dict()]
    both = pooled(rounds)
    assert both.count == 5 and both.median_ms == 1.1 and both.warmup_calls == 6
    assert "samples_ms" not in both.summary() and both.summary()["count"] == 5
    baseline = [[2.0, 2.2, 1.8, 2.1], [2.05, 1.95, 2.0]]
    candidate = [[1.0, 1.1, 0.9, 1.05], [1.0, 0.95, 1.02]]
    low, high = speedup_interval(baseline, candidate)
    assert low <= 2.0 / 1.0 <= high and high - low < 0.5
    assert speedup_interval(baseline, candidate) == (low, high)  # seeded: the same interval every time


def test_cuda_graph_timing_is_refused_off_a_gpu():
    import pytest

    from kbench.judge.worker.graphs import GraphedCall, GraphError
    from kbench.judge.protocol.timing import check_settings

    assert check_settings(TimingSettings(), "cpu") == TimingSettings()
    with pytest.raises(ValueError, match="CUDA-graph timing needs a CUDA device"):
        check_settings(TimingSettings(cuda_graph=True), "cpu")
    with pytest.raises(GraphError, match="needs a CUDA device"):
        GraphedCall(torch.relu, torch.device("cpu"))


def test_graph_inputs_are_copied_in_place_and_a_changed_structure_is_refused():
    """A replay reads the captured input buffers: new inputs must be copied into
    them, and a call the graph did not capture (other shape, dtype or scalar) refused."""
    import pytest

    from kbench.judge.worker.graphs import GraphError, _copy_into

    captured = [torch.zeros(3), 2, [torch.zeros(2)]]
    buffers = [captured[0], captured[2][0]]
    _copy_into(captured, [torch.ones(3), 2, [torch.full((2,), 5.0)]], "the arguments")
    assert captured[0] is buffers[0] and captured[2][0] is buffers[1]
    assert captured[0].tolist() == [1.0, 1.0, 1.0] and captured[2][0].tolist() == [5.0, 5.0]
    for changed, message in [
        ([torch.ones(4), 2, [torch.ones(2)]], r"arguments\[0\]: \(4,\)"),
        ([torch.ones(3, dtype=torch.float64), 2, [torch.ones(2)]], "float64"),
        ([torch.ones(3), 3, [torch.ones(2)]], r"arguments\[1\] changed from 2 to 3"),
        ([torch.ones(3), 2, [torch.ones(2), torch.ones(1)]], r"arguments\[2\] changed"),
        ([torch.ones(3), torch.ones(1), [torch.ones(2)]], r"arguments\[1\] changed"),
    ]:
        with pytest.raises(GraphError, match=message):
            _copy_into(captured, changed, "the arguments")


def test_a_graphed_column_reads_fixed_inputs_marked_static():
    """A column that replays its own CUDA graphs gets, under CUDA-graph timing,
    the first call's tensors as fixed buffers marked static (so its graphs need
    not copy them) and every later call's values copied into them beforehand."""
    from kbench.judge.worker.graphs import StaticInputs

    seen = []
    staged = StaticInputs(lambda x, scale: seen.append(x) or x * scale)
    first = torch.zeros(3)
    assert staged.stage([first, 2.0])().tolist() == [0.0, 0.0, 0.0]
    call = staged.stage([torch.ones(3), 2.0])  # copied now, before the timed call
    assert first.tolist() == [1.0, 1.0, 1.0]
    assert call().tolist() == [2.0, 2.0, 2.0] and seen[-1] is first
    assert getattr(first, "_dynamo_static_input_type", None) is not None


def _rounds(medians, spread=0.01, calls=60, seed=0):
    import random

    rng = random.Random(seed)
    return [[m * (1 + rng.uniform(-spread, spread)) for _ in range(calls)] for m in medians]


def test_an_interval_holds_what_moves_between_rounds():
    """Rounds that disagree by more than their calls' noise (a placement each, or a GPU whose clocks
    move): the interval holds that, with or without redrawing the rounds; steady rounds keep it narrow."""
    from kbench.judge.protocol.repeatability import speedup_interval

    baseline = _rounds([1.0, 1.0, 1.0], seed=1)
    candidate = _rounds([0.5, 0.55, 0.45], seed=2)  # the candidate's time moves 10% from round to round
    within = speedup_interval(baseline, candidate)
    across = speedup_interval(baseline, candidate, over_rounds=True)
    for low, high in (within, across):
        assert low < 1.0 / 0.55 and high > 1.0 / 0.45  # every round's own speedup inside
    steady = _rounds([0.5, 0.5, 0.5], seed=2)
    for over_rounds in (False, True):
        low, high = speedup_interval(baseline, steady, over_rounds=over_rounds)
        assert low < 2.0 < high and high - low < 0.05


def test_a_change_that_does_nothing_is_not_called_slower_when_its_rounds_swing():
    """The H200's do-nothing patch of tinylm/rotary-cache (2026-12-02): each side's time swung by a
    third from round to round, and the pooled medians gave 0.775x with a stratified interval of
    0.729-0.838. The interval now holds 1."""
    from kbench.judge.protocol.repeatability import speedup_interval

    candidate = _rounds([6.98, 9.28, 6.88], seed=3)
    baseline = _rounds([6.67, 6.73, 8.25], seed=4)
    low, high = speedup_interval(baseline, candidate)
    assert low < 0.75 and high > 1.0


def test_new_placement_is_a_no_op_on_a_cpu_and_a_judged_option():
    from conftest import PROBLEM, SOLUTIONS

    import kbench
    from kbench.judge.protocol.timing import new_placement

    assert new_placement(torch.device("cpu"), 0) is None
    placed = TimingSettings(min_calls=5, max_calls=20, budget_seconds=1.0, new_placement_per_round=True)
    verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu", trials=1, timing=placed)
    assert verdict.status == "correct", verdict.reason
    assert verdict.timing["settings"]["new_placement_per_round"] is True
    low, high = verdict.speedup_interval["eager"]
    assert low <= verdict.speedup["eager"] <= high


def test_a_launch_lead_is_a_bounded_judged_option_that_a_cpu_clock_ignores():
    """TimingSettings.launch_lead_us (an experiment, off by default): refused out of its range; on a
    CPU the clock has no queue to lead and times the call as it always does."""
    import pytest

    from kbench.judge.protocol.timing import MAX_LAUNCH_LEAD_US, Clock, check_settings

    assert TimingSettings().launch_lead_us == 0.0
    for wrong in (-1.0, MAX_LAUNCH_LEAD_US + 1, float("nan")):
        with pytest.raises(ValueError, match="launch_lead_us"):
            check_settings(TimingSettings(launch_lead_us=wrong), "cuda")
    assert check_settings(TimingSettings(launch_lead_us=200.0), "cuda").launch_lead_us == 200.0
    clock = Clock(torch.device("cpu"), lead_us=500.0)  # nothing of CUDA is touched (this torch may have none)
    clock_ms, host_ms, result = clock.time_call(lambda: "done")
    assert result == "done" and clock_ms == host_ms
