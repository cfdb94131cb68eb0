"""Correctness against the float64 truth (kbench.judge.trusted.compare's ``truth`` criterion,
kbench.judge.trusted.truth's float64 model): honest summation orders of a float32 matrix product pass
where the reference's float32 output and KernelBench's 1e-4 would fail them; wrong kernels,
lower precision and lazy answers still fail; without a truth, the reference's output judges."""

import math

import pytest
import torch
from conftest import SOLUTIONS

import kbench
from kbench.judge.trusted import truth as truth_module
from kbench.judge.trusted.compare import CRITERIA, TruthRecord, TruthUnavailable, check_criterion, compare_outputs
from kbench.judge.trusted.truth import Truth

CPU = {"output": "cpu"}


def judge(expected, actual, true, overrides=None, devices=CPU):
    return compare_outputs(expected, actual, devices, devices, overrides, truth=lambda: true)


def one_k_at_a_time(a, b):
    """The naive loop's order: the sum over k taken one term after another, in float32."""
    acc = torch.zeros(a.shape[0], b.shape[1])
    for k in range(a.shape[1]):
        acc += a[:, k:k + 1] * b[k:k + 1, :]
    return acc


def tiled(a, b, block=32):
    acc = torch.zeros(a.shape[0], b.shape[1])
    for k in range(0, a.shape[1], block):
        acc += a[:, k:k + block] @ b[k:k + block, :]
    return acc


@pytest.fixture(scope="module")
def product():
    """A float32 product with a long sum (K = 16384): the reference, and its float64 truth."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 16384, generator=gen), torch.randn(16384, 64, generator=gen)
    return a, b, a @ b, a.double() @ b.double()


@pytest.mark.parametrize("order", ["one_k_at_a_time", "tiled", "transposed_b", "split_k"])
def test_honest_summation_orders_of_a_float32_product_pass_against_the_truth(product, order):
    a, b, reference, true = product
    candidate = {
        "one_k_at_a_time": lambda: one_k_at_a_time(a, b),
        "tiled": lambda: tiled(a, b),
        "transposed_b": lambda: (a.unsqueeze(1) * b.t().contiguous().unsqueeze(0)).sum(-1),
        "split_k": lambda: torch.stack([a[:, i:i + 1024] @ b[i:i + 1024] for i in range(0, 16384, 1024)]).sum(0),
    }[order]()
    result = judge(reference, candidate, true)
    assert result.ok and result.criterion == "truth", result.detail
    assert 0 < result.truth["share"] < 0.5
    assert result.truth["reference_error"] > 0 and result.truth["multiple"] == 32


def test_the_naive_loop_fails_kernelbench_s_tolerance_and_passes_the_truth(product):
    """The issue's case: as accurate as the reference against the truth, not within 1e-4 of its output."""
    a, b, reference, true = product
    candidate = one_k_at_a_time(a, b)
    kernelbench = compare_outputs(reference, candidate, CPU, CPU)
    assert (kernelbench.ok, kernelbench.check, kernelbench.criterion) == (False, "values", "kernelbench")
    result = judge(reference, candidate, true)
    assert result.ok and result.kernelbench_ok is False
    assert result.truth["candidate_error"] < 16 * result.truth["reference_error"]


@pytest.mark.parametrize("lower", ["bfloat16", "float16_inputs"])
def test_a_float32_product_in_lower_precision_still_fails(product, lower):
    a, b, reference, true = product
    if lower == "bfloat16":
        candidate = (a.bfloat16() @ b.bfloat16()).float()
    else:  # rounded inputs, float32 sums: TF32's and fp16 tensor cores' error
        candidate = a.half().float() @ b.half().float()
    result = judge(reference, candidate, true)
    assert (result.ok, result.check, result.criterion) == (False, "values", "truth")
    assert "off the float64 truth" in result.detail and result.truth["share"] > 10


def test_a_batch_norm_off_by_a_hundredth_fails():
    torch.manual_seed(1)
    x = torch.randn(16, 8, 12, 12)
    norm = torch.nn.BatchNorm2d(8).requires_grad_(False)
    reference, true = norm(x), norm.double()(x.double())
    assert judge(reference, reference + 1e-7 * torch.randn_like(reference), true).ok
    result = judge(reference, reference + 1e-2, true)
    assert not result.ok and result.kernelbench_ok is False


@pytest.mark.parametrize("wrong", [lambda m: torch.zeros_like(m), lambda m: 2 * m, lambda m: -m])
def test_a_scalar_mean_off_by_its_own_size_fails(wrong):
    torch.manual_seed(2)
    x = torch.randn(64, 4096)
    reference, true = x.mean(), x.double().mean()
    assert judge(reference, x.sum() / x.numel(), true).ok  # another honest order
    result = judge(reference, wrong(reference), true)
    assert (result.ok, result.criterion) == (False, "truth"), result.detail


def test_what_kernelbench_s_criterion_accepts_the_truth_accepts():
    """The allowance holds the reference's own error: the truth only forgives, never adds a failure."""
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(256, 64, generator=gen) * torch.logspace(-3, 3, 64)
    true = x.double().exp().sin() * 1e3
    reference = (x.exp().sin() * 1e3)
    for step in range(20):
        wiggle = (torch.rand(reference.shape, generator=gen) * 2 - 1) * (1e-4 + 1e-4 * reference.abs()) * 0.999
        candidate = reference + wiggle
        kernelbench = compare_outputs(reference, candidate, CPU, CPU)
        result = judge(reference, candidate, true)
        assert kernelbench.ok and result.ok and result.kernelbench_ok, (step, result.detail)


def test_a_timed_check_asks_for_the_truth_only_where_the_reference_rejects(product):
    """Timed calls' checks (truth_on_pass off) skip the float64 model where it could decide nothing,
    and still judge by it where it decides: the naive loop passes, lower precision fails."""
    a, b, reference, true = product
    asked = []

    def truth():
        asked.append(1)
        return true

    def timed_check(candidate):
        return compare_outputs(reference, candidate, CPU, CPU, None, truth, truth_on_pass=False)

    assert timed_check(reference.clone()).ok and not asked  # the reference's criterion accepts: no truth
    assert timed_check(tiled(a, b)).ok
    naive = timed_check(one_k_at_a_time(a, b))
    assert naive.ok and naive.criterion == "truth" and naive.kernelbench_ok is False
    lower = timed_check((a.bfloat16() @ b.bfloat16()).float())
    assert (lower.ok, lower.criterion) == (False, "truth") and len(asked) >= 2


def test_an_exact_reference_leaves_the_problem_s_tolerance():
    x = torch.randn(1000)
    reference = torch.relu(x)
    true = torch.relu(x.double())
    assert judge(reference, reference + 5e-5, true).ok
    result = judge(reference, reference + 2e-4 * (1 + reference.abs()), true)
    assert not result.ok and result.truth["reference_scaled_error"] == 0


def test_non_finite_values_are_judged_against_the_reference():
    reference = torch.tensor([1.0, float("inf"), float("nan"), 3.0])
    true = torch.tensor([1.0, 1e300, float("nan"), 3.0], dtype=torch.float64)  # float32 overflowed
    assert judge(reference, reference.clone(), true).ok
    finite = reference.clone()
    finite[1] = 3e38
    assert judge(reference, finite, true).check == "finite"
    # The float64 model not finite where the reference is: no truth for that output.
    result = judge(reference, reference.clone(), torch.tensor([1.0, math.inf, math.nan, math.inf], dtype=torch.float64))
    assert result.ok and result.criterion == "kernelbench" and "not finite" in result.truth["unavailable"]


def test_integer_outputs_and_other_leaves_keep_their_checks():
    x = torch.randn(32, 16)
    reference, true = (x.sum(1), x.argmax(1), 7), (x.double().sum(1), x.argmax(1), 7)
    assert judge(reference, (x.sum(1), x.argmax(1), 7), true).ok
    assert judge(reference, (x.sum(1), x.argmax(1) + 1, 7), true).check == "values"
    assert judge(reference, (x.sum(1), x.argmax(1), 8), true).check == "value"
    assert judge(reference, (x.sum(1).double(), x.argmax(1), 7), true).check == "dtype"


def test_complex_outputs_compare_real_and_imaginary_parts():
    x = torch.randn(64, 256)
    reference, true = torch.fft.rfft(x), torch.fft.rfft(x.double())
    assert judge(reference, reference * (1 + 1e-6), true).ok
    assert not judge(reference, reference * 1.01, true).ok


def test_without_a_truth_the_reference_s_output_judges_and_the_reason_is_kept(product):
    a, b, reference, _ = product
    candidate = one_k_at_a_time(a, b)

    def unavailable():
        raise TruthUnavailable("the float64 model needs about 9 GiB")

    result = compare_outputs(reference, candidate, CPU, CPU, truth=unavailable)
    assert (result.ok, result.criterion) == (False, "kernelbench")
    assert result.truth == {"unavailable": "the float64 model needs about 9 GiB"}
    other = judge(reference, candidate, (reference.double(),))  # another structure
    assert other.criterion == "kernelbench" and "structure" in other.truth["unavailable"]
    lower = judge(reference, candidate, reference)  # the model fixed its own dtype: not a truth
    assert lower.criterion == "kernelbench" and "float32" in lower.truth["unavailable"]


def test_the_multiple_alone_decides_under_no_tolerance_and_a_problem_may_set_its_own(product):
    a, b, reference, true = product
    candidate = one_k_at_a_time(a, b)  # about 6x the reference's scaled error
    exact = {"atol": 0.0, "rtol": 0.0}
    assert judge(reference, candidate, true, {"float32": exact}).ok
    assert not judge(reference, candidate, true, {"float32": {**exact, "multiple": 2.0}}).ok


def test_criteria_are_named_and_checked():
    assert set(CRITERIA) == {"truth", "kernelbench"} and check_criterion("truth") == "truth"
    with pytest.raises(ValueError, match="choose from"):
        check_criterion("loose")


def test_the_record_keeps_the_kernelbench_column_and_the_worst_errors():
    record = TruthRecord()
    record.add({"ok": True, "criterion": "truth", "kernelbench_ok": True,
                "truth": {"candidate_error": 1e-4, "reference_error": 2e-4, "share": 0.1}})
    record.add({"ok": True, "criterion": "truth", "kernelbench_ok": False,
                "truth": {"candidate_error": 9e-4, "reference_error": 1e-4, "share": 0.3}})
    record.add({"ok": True, "criterion": "kernelbench", "kernelbench_ok": True, "truth": {"unavailable": "why"}})
    fields = record.verdict_fields(True, "truth")
    assert fields["kernelbench_correct"] is False and fields["correctness"] == "truth"
    assert fields["truth"] == {"candidate_error": 9e-4, "reference_error": 2e-4, "share": 0.3, "checks": 3,
                               "judged_by_truth": 2, "unavailable": ["why"]}
    assert record.verdict_fields(False, "truth")["kernelbench_correct"] is False


# --- the float64 model ------------------------------------------------------------------------------


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(64, 32)
        self.register_buffer("steps", torch.tensor(3))

    def forward(self, x, index, scale: float):
        return self.linear(x)[index] * scale + torch.tensor(0.5), self.steps


def made(dtype=torch.float32):
    def make():
        torch.manual_seed(5)
        return Linear().to(dtype)
    return make


def test_the_float64_model_has_the_reference_s_weights_and_inputs_cast_up_integers_kept():
    truth = Truth(made(), torch.device("cpu"))
    x, index = torch.randn(8, 64), torch.tensor([0, 3, 5])
    out, steps = truth.output([x, index, 2.0])
    model = made()()
    expected = (x.double() @ model.linear.weight.double().t() + model.linear.bias.double())[index] * 2.0 + 0.5
    assert out.dtype == torch.float64 and torch.allclose(out, expected, rtol=1e-12, atol=1e-12)
    assert steps.dtype == torch.int64
    assert truth.model is not None and truth.model.linear.weight.dtype == torch.float64  # kept for the next check


def test_a_bfloat16_model_s_truth_starts_from_its_rounded_weights():
    truth = Truth(made(torch.bfloat16), torch.device("cpu"))
    truth.output([torch.randn(2, 64).bfloat16(), torch.tensor([0]), 1.0])
    rounded = made(torch.bfloat16)().linear.weight
    assert torch.equal(truth.model.linear.weight, rounded.double())


def test_a_model_that_does_not_run_in_float64_is_said_once():
    class Fixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 4))

        def forward(self, x):
            return torch.mm(x, self.w.float())

    calls = []
    truth = Truth(lambda: calls.append(1) or Fixed(), torch.device("cpu"))
    for _ in range(2):
        with pytest.raises(TruthUnavailable, match="does not run in float64"):
            truth.output([torch.randn(2, 4)])
    assert calls == [1]


def test_a_truth_too_large_for_free_memory_is_not_computed(monkeypatch):
    monkeypatch.setattr(truth_module, "_free_bytes", lambda device: 1000)
    with pytest.raises(TruthUnavailable, match="needs about"):
        Truth(made(), torch.device("cpu")).output([torch.randn(8, 64), torch.tensor([0]), 1.0])


def test_running_out_of_memory_on_the_way_is_a_reason_not_a_failure():
    class Hungry(torch.nn.Module):
        def forward(self, x):
            raise torch.OutOfMemoryError("CUDA out of memory")

    truth = Truth(Hungry, torch.device("cpu"))
    with pytest.raises(TruthUnavailable, match="ran out of memory"):
        truth.output([torch.randn(2)])
    assert truth.failed is None  # tried again at the next check


# --- end to end, on the CPU --------------------------------------------------------------------------

LONG_PRODUCT = '''
import torch
import torch.nn as nn

M, K, N = 64, 16384, 64


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
'''

TRITON_LOOP = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def one_k_at_a_time(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    """The naive loop of many model-written kernels: a tile of C, its sum over k one term at a time."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + rows * K + k, mask=rows < M, other=0.0)
        b = tl.load(b_ptr + k * N + cols, mask=cols < N, other=0.0)
        acc += a[:, None] * b[None, :]
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        c = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(a.shape[0], 64), triton.cdiv(b.shape[1], 64))
        one_k_at_a_time[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], BLOCK=64)
        return c
'''

TRITON_TILED = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tiled_k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    """A tile of C summed over tiles of k, one tile after another (the tiled form)."""
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rows[:, None] * K + k + ks[None, :],
                    mask=(rows[:, None] < M) & (k + ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + ks[:, None]) * N + cols[None, :],
                    mask=(k + ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        c = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(a.shape[0], 64), triton.cdiv(b.shape[1], 64))
        tiled_k[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], BLOCK=64, BLOCK_K=64, PRECISION="ieee")
        return c
'''

TORCH_LOOP = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        acc = torch.zeros(a.shape[0], b.shape[1], device=a.device)
        for k in range(0, a.shape[1], 4):  # tiles of 4 along k, one after another
            acc += a[:, k:k + 4] @ b[k:k + 4]
        return acc
'''

BFLOAT16 = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return (a.bfloat16() @ b.bfloat16()).float()
'''


@pytest.fixture
def long_product(tmp_path):
    problem = tmp_path / "long_product.py"
    problem.write_text(LONG_PRODUCT)
    return problem


def evaluate(problem, tmp_path, source, correctness="truth", trials=2):
    solution = tmp_path / "solution.py"
    solution.write_text(source)
    return kbench.evaluate(problem, solution, "cpu", size="default", trials=trials, measure_time=False, policy="off",
                           correctness=correctness)


def test_an_honest_long_sum_is_correct_against_the_truth_and_incorrect_by_kernelbench_s_tolerance(
        long_product, tmp_path):
    verdict = evaluate(long_product, tmp_path, TORCH_LOOP, trials=3)
    assert verdict.status == "correct", verdict.reason
    assert verdict.correctness == "truth" and all(t.criterion == "truth" for t in verdict.trials)
    assert verdict.kernelbench_correct is False  # the KernelBench-compatible column
    assert verdict.truth["judged_by_truth"] == 3 and verdict.truth["share"] < 0.5
    assert verdict.truth["reference_error"] > 0
    strict = evaluate(long_product, tmp_path, TORCH_LOOP, correctness="kernelbench", trials=3)
    assert strict.status == "incorrect" and "values" in strict.reason, strict.reason
    assert strict.correctness == "kernelbench" and strict.trials[-1].criterion == "kernelbench"


def test_a_tiled_k_triton_kernel_is_correct_against_the_truth(long_product, tmp_path):
    """Triton's interpreter on the CPU (the one-k-at-a-time loop takes minutes there: on the GPU below)."""
    verdict = evaluate(long_product, tmp_path, TRITON_TILED)
    assert verdict.status == "correct", verdict.reason
    # the first trial always, the second only where KernelBench's tolerance rejects it
    assert verdict.truth["checks"] == 2 and verdict.truth["judged_by_truth"] >= 1 and verdict.truth["share"] < 0.5


def test_a_product_in_bfloat16_is_incorrect_against_the_truth(long_product, tmp_path):
    verdict = evaluate(long_product, tmp_path, BFLOAT16)
    assert verdict.status == "incorrect" and "off the float64 truth" in verdict.reason, verdict.reason
    assert verdict.trials[0].criterion == "truth" and verdict.trials[0].truth["share"] > 10
    assert verdict.kernelbench_correct is False


def test_an_unknown_criterion_is_a_value_error():
    with pytest.raises(ValueError, match="correctness criterion"):
        kbench.evaluate(SOLUTIONS.parent / "problems" / "linear_tanh.py", SOLUTIONS / "honest_triton.py", "cpu",
                        correctness="close-enough")


# --- on a GPU ---------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_on_a_gpu_honest_orders_pass_and_lower_precision_fails():
    """cuBLAS as the reference (TF32 off, as the judge pins it), float64 on the device as the truth."""
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda")
    gen = torch.Generator(device).manual_seed(0)
    a = torch.randn(1024, 16384, device=device, generator=gen)
    b = torch.randn(16384, 1024, device=device, generator=gen)
    reference, true = a @ b, a.double() @ b.double()
    on = {"output": "cuda:0"}
    honest = torch.zeros_like(reference)
    for k in range(0, 16384, 256):
        honest += a[:, k:k + 256] @ b[k:k + 256]
    assert judge(reference, honest, true, devices=on).ok
    assert judge(reference, a @ b.t().contiguous().t(), true, devices=on).ok
    assert not judge(reference, (a.bfloat16() @ b.bfloat16()).float(), true, devices=on).ok
    tf32 = a.half().float() @ b.half().float()
    assert not judge(reference, tf32, true, devices=on).ok


@pytest.mark.gpu
def test_on_a_gpu_the_judge_calls_the_naive_triton_loop_correct(long_product, tmp_path):
    solution = tmp_path / "solution.py"
    solution.write_text(TRITON_LOOP)
    verdict = kbench.evaluate(long_product, solution, "cuda", size="default", trials=3, measure_time=False,
                              policy="off")
    assert verdict.status == "correct", verdict.reason
    assert verdict.truth["judged_by_truth"] == 3 and verdict.correctness == "truth"
    tiled = tmp_path / "tiled.py"
    tiled.write_text(TRITON_TILED)
    assert kbench.evaluate(long_product, tiled, "cuda", size="default", trials=3, measure_time=False,
                           policy="off").status == "correct"
    for name, source in (("bf16", BFLOAT16), ("tf32", TRITON_TILED.replace('PRECISION="ieee"', 'PRECISION="tf32"'))):
        wrong = tmp_path / f"{name}.py"
        wrong.write_text(source)
        verdict = kbench.evaluate(long_product, wrong, "cuda", size="default", trials=2, measure_time=False,
                                  policy="off")
        assert verdict.status == "incorrect", (name, verdict.reason)


# --- the KernelBench-compatible column --------------------------------------------------------------


def test_the_kernelbench_compatible_figures_count_only_what_its_criterion_accepts():
    from run_fixtures import run_data
    from rich.console import Console

    from kbench.cli.scores import print_score, score_document
    from kbench.runs import export
    from kbench.runs.kernelbench_score import kernelbench_score
    from kbench.runs.score import columns_of, outcomes, score

    run = run_data([("P", 1, [("correct", 2.0)]), ("Q", 1, [("correct", 2.0)]), ("R", 1, [("incorrect", None)])])
    run.evaluations[0].verdict["kernelbench_correct"] = False  # correct against the truth only
    result = score(outcomes(run), columns_of(run))
    compatible = kernelbench_score(outcomes(run), result).overall
    assert result.overall.correct_rate.value == pytest.approx(2 / 3)
    assert compatible.correct_rate.value == pytest.approx(1 / 3)
    assert compatible.fast_p["eager"][1.0].value == pytest.approx(1 / 3)
    document = score_document(run, result)["kernelbench_compatible"]
    assert document["fast_p"]["eager"]["1"] == pytest.approx(1 / 3) and set(document["levels"]) == {"1"}
    out = Console(record=True, width=250)
    print_score(out, run, result)
    assert "correct, KernelBench-compatible" in out.export_text()
    assert [row["correct_kernelbench"] for row in export.rows(run)] == [False, True, False]
    layout = export.kernelbench(run)
    assert layout["P"][0]["correctness"] is False and layout["P"][0]["metadata"]["kbench_correct"] is True
    assert layout["Q"][0]["correctness"] is True


@pytest.mark.parametrize("tolerance, ok", [
    ('{"float32": {"atol": 1e-3, "rtol": 1e-4, "multiple": 8}}', True),
    ('{"bfloat16": {"atol": 0.05}}', True),
    ('{"float32": {"multiple": 1}}', False),  # would reject what the reference-side criterion accepts
    ('{"float32": {"atol": -1}}', False),
    ('{"float32": {"tol": 1e-3}}', False),
    ('{"float32": 1e-3}', False),
])
def test_a_problem_s_tolerance_is_checked_when_read(tmp_path, tolerance, ok):
    from kbench.suite.problem import ProblemError, load_problem

    path = tmp_path / "p.py"
    path.write_text(LONG_PRODUCT + f"\nKBENCH_TOLERANCE = {tolerance}\n")
    if ok:
        assert load_problem(path).tolerance
    else:
        with pytest.raises(ProblemError, match="KBENCH_TOLERANCE"):
            load_problem(path)


# --- the benchmarks' logic (they run on the GPU machine) ---------------------------------------------


def test_the_cost_benchmark_checks_as_the_reference_worker_does():
    from conftest import load_benchmark

    row = load_benchmark("truth_cost").measure("level1/matmul_square", "cpu", seeds=1)
    assert row["criterion"] == "truth" and row["ok"] and row["unavailable"] is None
    assert row["check_truth_ms"] > 0 and row["reference_error"] > 0


def test_the_calibration_separates_honest_orders_from_lower_precision():
    from conftest import load_benchmark

    orders = load_benchmark("truth_orders")
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 4096, generator=gen), torch.randn(4096, 64, generator=gen)
    reference, true = a @ b, a.double() @ b.double()
    assert orders.case("tiles", reference, orders.tiles(a, b, 32), true)["passes"]
    low = orders.case("bf16", reference, (a.bfloat16() @ b.bfloat16()).float(), true)
    assert not low["passes"] and low["ratio"] > 100


def test_a_truth_that_fails_on_the_way_leaves_the_reference_to_judge():
    x = torch.randn(16)

    def broken():
        raise RuntimeError("inputs could not be drawn again")

    result = compare_outputs(x, x.clone(), CPU, CPU, truth=broken)
    assert result.ok and result.criterion == "kernelbench" and "RuntimeError" in result.truth["unavailable"]


def test_a_float64_model_far_from_the_reference_is_no_truth():
    """Random numbers drawn in forward (or another path in float64): a multiple of that error would pass anything."""
    gen = torch.Generator().manual_seed(4)
    reference = torch.randn(256, generator=gen)
    other = torch.randn(256, generator=gen).double()  # what the float64 model drew instead
    result = judge(reference, torch.zeros_like(reference), other)
    assert (result.ok, result.criterion) == (False, "kernelbench") and "not a truth" in result.truth["unavailable"]
    assert judge(reference, reference.clone(), other).ok
