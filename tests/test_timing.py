import torch

from kbench.timing import FreshInputs, TimingSettings, measure, median_rel_error, seed_sequence


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
    from kbench.timing import pooled, speedup_interval, summarize

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
