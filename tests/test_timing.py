import torch

from kbench.timing import FreshInputs, TimingSettings, measure, median_rel_error


def test_fresh_inputs_change_every_call_but_repeat_for_the_same_seed():
    base = [torch.randn(64), torch.arange(5), 3]
    first, second = FreshInputs(base, seed=7), FreshInputs(base, seed=7)
    calls = [first.fill(first.next_scale())[0].clone() for _ in range(3)]
    assert not torch.equal(calls[0], calls[1]) and not torch.equal(calls[1], calls[2])
    assert torch.equal(second.fill(second.next_scale())[0], calls[0])
    assert torch.equal(first.fill(0.75)[1], base[1])  # integers are left as they are
    assert torch.equal(torch.sign(calls[0]), torch.sign(base[0]))  # signs (domains) kept


def test_median_rel_error_shrinks_with_more_samples_of_the_same_spread():
    few = [1.0, 1.1, 0.9, 1.05, 0.95] * 4
    many = few * 25
    assert median_rel_error(many) < median_rel_error(few)
    assert median_rel_error([1.0, 1.0]) == float("inf")


def test_measure_on_cpu_keeps_count_spread_and_stop_reason():
    settings = TimingSettings(min_calls=5, max_calls=40, budget_seconds=2.0, warmup_seconds=0.0)
    result = measure(lambda x: x * 2, FreshInputs([torch.randn(1000)], seed=1), torch.device("cpu"), settings)
    assert result.clock == "cpu-perf-counter"
    assert 5 <= result.count <= 40
    assert result.min_ms <= result.p25_ms <= result.median_ms <= result.p75_ms <= result.max_ms
    assert result.stop_reason in {"stable", "budget", "max_calls"}
    assert result.warmup_calls >= settings.warmup_calls
    assert result.settings["max_calls"] == 40
