"""Every verdict the judge gives, each from a fixture solution that must get it.

Most fixtures are plain PyTorch (the guard's strict policy would reject them
as such before they run): they are judged with ``policy="off"`` because these
tests are about the sandbox and the comparison; test_guard.py and the exploit
suite test the guard."""

import pytest
from conftest import EXAMPLES, PROBLEM, SOLUTIONS

import kbench
from kbench.judge.processes.process import OUTPUT_TAIL_BYTES

CASES = [
    ("wrong_values", "incorrect", "trial 0: values"),
    ("wrong_shape", "incorrect", "trial 0: shape"),
    ("wrong_dtype", "incorrect", "trial 0: dtype"),
    ("nan_output", "incorrect", "trial 0: finite"),
    ("wrong_structure", "incorrect", "trial 0: structure"),
    ("reads_reference_file", "incorrect", "trial 0: values"),
    ("syntax_error", "compile_error", "SyntaxError"),
    ("not_python", "compile_error", "build:"),
    ("no_model_new", "compile_error", "defines no ModelNew"),
    ("wrong_signature", "compile_error", "init: TypeError"),
    ("raises_in_forward", "runtime_error", "invalid configuration argument"),
    ("sys_exit", "crashed", "exited with code 0"),
    ("os_exit", "crashed", "exited with code 0"),
    ("segfault", "crashed", "signal SIGSEGV"),
]


# Tracebacks name the solution's own file and line, not the evaluation's private copy.
OWN_FRAMES = {"raises_in_forward": 'raises_in_forward.py", line 12, in forward',
              "syntax_error": 'syntax_error.py", line 3'}


@pytest.mark.parametrize("name, status, reason", CASES, ids=[c[0] for c in CASES])
def test_fixture_gets_its_verdict(name, status, reason):
    verdict = kbench.evaluate(PROBLEM, SOLUTIONS / f"{name}.py", "cpu", measure_time=False, trials=2, policy="off")
    assert verdict.status == status, verdict.reason
    assert reason in verdict.reason
    assert "kbench-" not in verdict.reason and "kbench/judge/worker/session.py" not in verdict.reason, verdict.reason
    if name in OWN_FRAMES:
        assert f'  File "{SOLUTIONS}/{OWN_FRAMES[name]}' in verdict.reason, verdict.reason
    assert verdict.correct is False
    assert verdict.runtime_ms is None and verdict.speedup == {"eager": None}


def test_infinite_loop_times_out_within_the_limit():
    verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "infinite_loop.py", "cpu", timeout=20, measure_time=False, policy="off")
    assert verdict.status == "timeout"
    assert "running the trials" in verdict.reason
    assert verdict.wall_seconds < 40


def test_memory_hog_is_killed_at_the_memory_limit():
    verdict = kbench.evaluate(
        PROBLEM, SOLUTIONS / "memory_hog.py", "cpu", measure_time=False, memory_limit_bytes=1 << 30, policy="off"
    )
    assert verdict.status == "crashed"
    assert "memory limit exceeded" in verdict.reason


def test_flood_of_output_is_judged_and_only_its_tail_kept():
    verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "floods_output.py", "cpu", measure_time=False, trials=2, policy="off")
    assert verdict.status == "correct", verdict.reason
    assert verdict.output_bytes > 8 << 20
    assert len(verdict.output_tail) < OUTPUT_TAIL_BYTES + 100
    assert "last line of the flood" in verdict.output_tail


def test_honest_triton_solution_is_correct_and_timed_against_eager():
    verdict = kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu")
    assert verdict.status == "correct", verdict.reason
    assert len(verdict.trials) == 5 and all(t.ok for t in verdict.trials)
    assert verdict.max_abs_error < 1e-4
    assert verdict.tolerance == {"float32": {"atol": 1e-4, "rtol": 1e-4}}
    eager = verdict.baselines["eager"]["runtime_ms"]
    assert verdict.runtime_ms > 0 and eager > 0
    assert verdict.speedup["eager"] == pytest.approx(eager / verdict.runtime_ms)
    assert verdict.timing["clock"] == "cpu-perf-counter"
    assert verdict.timing["count"] >= verdict.timing["settings"]["min_calls"]
    assert len(set(verdict.seeds["trials"])) == 5
    # Candidate and eager alternate over rounds, on the same calls; the speedup has its interval.
    rounds = verdict.timing["settings"]["rounds"]
    assert len(verdict.timing["rounds"]) == len(verdict.baselines["eager"]["timing"]["rounds"]) == rounds
    assert verdict.baselines["eager"]["timing"]["count"] == verdict.timing["count"]
    low, high = verdict.speedup_interval["eager"]
    assert low <= verdict.speedup["eager"] <= high
    assert "samples_ms" not in verdict.timing  # raw samples stay out of the record


def test_seeds_differ_between_evaluations():
    runs = [
        kbench.evaluate(PROBLEM, SOLUTIONS / "honest_triton.py", "cpu", measure_time=False, trials=2)
        for _ in range(2)
    ]
    assert runs[0].seeds["init"] != runs[1].seeds["init"]
    assert runs[0].seeds["trials"] != runs[1].seeds["trials"]


@pytest.mark.slow
def test_honest_cpp_solution_is_correct():
    verdict = kbench.evaluate("level1/swish", EXAMPLES / "swish.py", "cpu", measure_time=False, timeout=600)
    assert verdict.status == "correct", verdict.reason


def test_broken_problem_is_a_problem_error_not_a_verdict(tmp_path):
    problem = tmp_path / "broken.py"
    problem.write_text(
        "import torch\n"
        "class Model(torch.nn.Module):\n"
        "    def __init__(self, a, b):\n"
        "        super().__init__()\n"
        "def get_inputs():\n"
        "    raise ValueError('inputs cannot be made')\n"
        "def get_init_inputs():\n"
        "    return [64, 48]\n"
    )
    with pytest.raises(kbench.ProblemError, match="the reference failed.*inputs cannot be made"):
        kbench.evaluate(problem, SOLUTIONS / "honest_triton.py", "cpu", measure_time=False)


def test_build_only_imports_and_reports_compile_errors():
    from kbench.judge import build

    assert build(SOLUTIONS / "honest_triton.py", "cpu")["ok"] is True
    failed = build(SOLUTIONS / "syntax_error.py", "cpu")
    assert failed["ok"] is False and "SyntaxError" in failed["error"]


BUILDS_IN_INIT = """
import os, pathlib, torch

class ModelNew(torch.nn.Module):  # as a solution that calls load_inline in __init__, leaving what it built
    def __init__(self, in_features, out_features):
        super().__init__()
        if in_features <= 0:
            raise ValueError("the problem's init inputs did not reach the model")
        built = pathlib.Path(os.environ["TORCH_EXTENSIONS_DIR"]) / "built_in_init"
        built.mkdir(parents=True, exist_ok=True)
        (built / "extension.so").write_text(f"{in_features}x{out_features}")

    def forward(self, x):
        return x
"""


def test_a_build_given_the_problem_makes_the_model_so_what_init_compiles_is_built_ahead(tmp_path, monkeypatch):
    from kbench.judge import build
    from kbench.judge.builds.cache import candidate_build_dir
    from kbench.suite import find_problem

    monkeypatch.setenv("KBENCH_CACHE", str(tmp_path / "cache"))
    problem = find_problem(PROBLEM)
    imported_only, made = (kbench.Solution(source=f"# {name}\n{BUILDS_IN_INIT}") for name in ("imported", "made"))
    assert build(imported_only, "cpu")["ok"] is True
    assert not (candidate_build_dir(imported_only.sha256) / "torch_extensions" / "built_in_init").exists()
    answer = build(made, "cpu", problem=problem)
    assert answer["ok"] is True and answer["init_seconds"] is not None, answer
    built = candidate_build_dir(made.sha256) / "torch_extensions" / "built_in_init" / "extension.so"
    assert built.read_text() == "64x48"  # the problem's own init inputs


def test_build_directories_are_keyed_by_source_and_toolchain(monkeypatch):
    """Two solutions whose extensions share a name (models often call theirs relu_cuda) never
    share a build, judged A, B, A each finds its own again; another torch or compiler builds anew."""
    from kbench.judge.builds import cache as build_cache

    a, b = build_cache.candidate_build_dir("a" * 64), build_cache.candidate_build_dir("b" * 64)
    assert a != b and build_cache.candidate_build_dir("a" * 64) == a
    monkeypatch.setattr(build_cache, "build_environment", lambda: "torch 9.9 built otherwise")
    assert build_cache.candidate_build_dir("a" * 64) not in (a, b)


def test_a_trial_at_the_small_size_comes_first_when_judging_the_default_size(tmp_path):
    relu = (EXAMPLES.parent / "level1" / "relu.py").read_text()
    problem = tmp_path / "relu_mid.py"
    problem.write_text(relu.replace("batch_size = 16384\ndim = 32768", "batch_size = 32\ndim = 8192"))
    honest = kbench.evaluate(problem, EXAMPLES / "relu.py", "cpu", size="default", trials=1, measure_time=False)
    assert honest.status == "correct", honest.reason
    assert "other_size" in honest.phase_seconds and "other_size" in honest.seeds
    big_only = tmp_path / "big_only.py"
    big_only.write_text((EXAMPLES / "relu.py").read_text().replace(
        "        x = x.contiguous()\n",
        "        x = x.contiguous()\n        if x.numel() < 100_000:\n            raise RuntimeError('written for the test shape')\n",
    ))
    verdict = kbench.evaluate(problem, big_only, "cpu", size="default", trials=1, measure_time=False)
    # the failure's own status: a kernel written without bounds checks fails here as a special-cased one does
    assert verdict.status == "runtime_error", verdict.reason
    assert verdict.reason.startswith(
        "other-size: at the problem's small size: forward: RuntimeError: written for the test shape"
    )
    wrong_when_small = tmp_path / "wrong_when_small.py"
    wrong_when_small.write_text((EXAMPLES / "relu.py").read_text().replace(
        "        x = x.contiguous()\n",
        "        x = x.contiguous()\n        if x.numel() < 100_000:\n            return x.clone()\n",
    ))
    verdict = kbench.evaluate(problem, wrong_when_small, "cpu", size="default", trials=1, measure_time=False)
    assert verdict.status == "incorrect" and verdict.reason.startswith(
        "other-size: wrong at the problem's small size: "), verdict.reason


def test_after_the_small_trial_the_model_is_of_the_test_size_s_module(tmp_path):
    """A Model whose forward reads its module's size constants is judged at the size it was resized to
    (on both sides: a repository's workload is the candidate's own Model)."""
    relu = (EXAMPLES.parent / "level1" / "relu.py").read_text()
    problem = tmp_path / "relu_reads_globals.py"
    problem.write_text(relu.replace("batch_size = 16384\ndim = 32768", "batch_size = 32\ndim = 8192").replace(
        "return torch.relu(x)", "return torch.relu(x.reshape(batch_size, dim))"))
    assert "x.reshape(batch_size, dim)" in problem.read_text()
    verdict = kbench.evaluate(problem, EXAMPLES / "relu.py", "cpu", size="default", trials=1, measure_time=False)
    assert verdict.status == "correct", verdict.reason


def test_workers_die_with_a_judge_killed_outright(tmp_path):
    """SIGKILL gives the judge no chance to close its workers; a worker busy in a
    long call must not outlive it (a resumed run would share the GPU with it)."""
    import signal
    import subprocess
    import sys

    import psutil

    slow = tmp_path / "slow_init.py"
    slow.write_text(PROBLEM.read_text().replace("super().__init__()", "super().__init__()\n        import time; time.sleep(120)", 1))
    judge = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\n"
            "from kbench.judge.processes.devices import worker_env\n"
            "from kbench.judge.trusted.reference import load_message\n"
            "from kbench.suite.problem import load_problem\n"
            "from kbench.judge.processes.process import Worker\n"
            "w = Worker(worker_env('cpu'))\n"
            f"w.send({{**load_message(load_problem({str(slow)!r}), 'cpu', 'small', 1), 'role': 'reference'}})\n"
            "print(w.process.pid, flush=True)\n"
            "time.sleep(5)\n"  # the worker is in the problem's 120 s constructor by then
            "print('busy', flush=True)\n"
            "time.sleep(60)\n"
        )],
        stdout=subprocess.PIPE, text=True,
    )
    worker = psutil.Process(int(judge.stdout.readline()))
    assert judge.stdout.readline().strip() == "busy"
    judge.send_signal(signal.SIGKILL)
    judge.wait()
    gone, alive = psutil.wait_procs([worker], timeout=20)
    assert worker in gone and not alive


def test_a_bfloat16_variant_casts_inputs_and_weights_for_both_sides(tmp_path):
    problem = tmp_path / "linear_tanh_bf16.py"
    problem.write_text('KBENCH_DTYPES = ("float32", "bfloat16")\n' + PROBLEM.read_text())
    verdict = kbench.evaluate(problem, SOLUTIONS / "honest_triton.py", "cpu", dtype="bfloat16", trials=1, measure_time=False)
    assert verdict.status == "correct", verdict.reason
    assert verdict.dtype == "bfloat16" and set(verdict.tolerance) == {"bfloat16"}
    # A solution that computes in float32 whatever it is given answers in the wrong dtype.
    fp32 = tmp_path / "fp32_only.py"
    fp32.write_text((SOLUTIONS / "honest_triton.py").read_text().replace(
        "z = (x @ self.linear.weight.t()).contiguous()",
        "z = (x.float() @ self.linear.weight.float().t()).contiguous()",
    ).replace("z, self.linear.bias, y", "z, self.linear.bias.float(), y"))
    wrong = kbench.evaluate(problem, fp32, "cpu", dtype="bfloat16", trials=1, measure_time=False)
    assert wrong.status == "incorrect" and "dtype" in wrong.reason, wrong.reason


def test_both_workers_run_a_dtype_at_its_own_default_size(tmp_path):
    problem = tmp_path / "linear_tanh_bf16_sized.py"
    problem.write_text('KBENCH_DTYPES = ("float32", "bfloat16")\nKBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 8}}\n'
                       + PROBLEM.read_text())
    picky = tmp_path / "expects_eight_rows.py"
    picky.write_text((SOLUTIONS / "honest_triton.py").read_text().replace(
        "        z = (x @ self.linear.weight.t()).contiguous()",
        "        if x.shape[0] != 8:\n            raise RuntimeError(f'{x.shape[0]} rows')\n"
        "        z = (x @ self.linear.weight.t()).contiguous()",
    ))
    sized = kbench.evaluate(problem, picky, "cpu", size="default", dtype="bfloat16", trials=1, measure_time=False)
    assert sized.status == "correct", sized.reason
    plain = kbench.evaluate(problem, picky, "cpu", size="default", trials=1, measure_time=False)
    assert plain.status == "runtime_error" and "32 rows" in plain.reason


def test_the_work_counts_are_those_of_the_size_the_model_was_resized_to():
    """The speed-of-light rule holds the judged size's work against the time, not the
    small size's the workers loaded first (a GPU evaluation's other-size trial)."""
    import time

    from kbench.judge.processes.devices import worker_env
    from kbench.judge.processes.process import Worker
    from kbench.judge.trusted.reference import load_message

    problem = kbench.find_problem("level1/relu")
    with Worker(worker_env("cpu")) as worker:
        small = worker.request({**load_message(problem, "cpu", "small", 1), "role": "reference"}, time.monotonic() + 120,
                               "loading")
        resized = worker.request({"op": "resize", "size": "default", "init_seed": 1}, time.monotonic() + 120,
                                 "resizing")
    assert resized["ok"] and resized["work"]["bytes"] > small["work"]["bytes"] > 0


def test_a_traceback_keeps_the_solutions_frames_and_where_the_error_was_raised():
    from kbench.judge.trusted.tracebacks import for_author

    copy = "/dev/shm/kbench-abc/solution.py"
    frame = '  File "{}", line {}, in {}\n    {}\n'
    raw = ("forward: RuntimeError: boom\nTraceback (most recent call last):\n"
           + frame.format("/x/kbench/judge/worker/session.py", 206, "_one_call", "out = call(args)")
           + frame.format("/x/torch/nn/modules/module.py", 1789, "_call_impl", "return forward_call(*args)")
           + frame.format(copy, 12, "forward", "y = self.inner(x)")
           + frame.format("/x/torch/nn/modules/module.py", 1789, "_call_impl", "return forward_call(*args)")
           + frame.format(copy, 5, "forward", "return torch.mm(x, x)")
           + frame.format("/x/torch/functional.py", 10, "mm", "raise RuntimeError('boom')")
           + "RuntimeError: boom")
    assert for_author(raw, copy, "/home/me/kernel.py") == (
        "forward: RuntimeError: boom\n"
        "Traceback (most recent call last; 3 frame(s) of kbench, torch or other libraries hidden):\n"
        + frame.format("/home/me/kernel.py", 12, "forward", "y = self.inner(x)")
        + frame.format("/home/me/kernel.py", 5, "forward", "return torch.mm(x, x)")
        + frame.format("/x/torch/functional.py", 10, "mm", "raise RuntimeError('boom')")
        + "RuntimeError: boom")
    harness_only = ("init: TypeError: takes 1 argument\nTraceback (most recent call last):\n"
                    + frame.format("/x/kbench/judge/worker/session.py", 139, "make_model", "self.model_class(*init)")
                    + "TypeError: takes 1 argument")
    assert "worker.py" not in for_author(harness_only, copy, "kernel.py")
    assert for_author(harness_only, copy, "kernel.py").endswith("hidden):\nTypeError: takes 1 argument")


def test_basic_errors_come_before_the_style_rules_and_cheating_is_still_rejected_unrun(tmp_path):
    """Under the strict policy: a file without ModelNew is a load error and
    a wrong plain-PyTorch answer is incorrect (the style rule that would reject them
    is a flag); a right one is rejected by the style rule once its trials pass (under
    the default, lenient, policy it is correct with the style rule as a flag); a
    rule against cheating still rejects before anything of the solution runs."""
    from kbench.judge.guard import AFTER_TRIALS, DEFAULT_POLICY

    no_model = kbench.evaluate(PROBLEM, SOLUTIONS / "no_model_new.py", "cpu", measure_time=False, trials=1,
                               policy="strict")
    assert no_model.status == "compile_error" and "defines no ModelNew" in no_model.reason, no_model.reason
    assert any(flag.startswith("no-kernel: ") and "once the solution passes its trials" in flag
               for flag in no_model.flags), no_model.flags
    plain = tmp_path / "plain.py"
    plain.write_text((SOLUTIONS / "wrong_values.py").read_text().replace(
        "torch.tanh(x @ self.linear.weight.t())", "torch.tanh(self.linear(x))"))
    right = kbench.evaluate(PROBLEM, plain, "cpu", measure_time=False, trials=2, policy="strict")
    assert right.status == "rejected" and right.reason.split(":")[0] in AFTER_TRIALS, right.reason
    assert [t.ok for t in right.trials] == [True, True]
    assert DEFAULT_POLICY == "lenient"
    described = kbench.evaluate(PROBLEM, plain, "cpu", measure_time=False, trials=2)
    assert (described.status, described.policy) == ("correct", "lenient"), described.reason
    assert right.reason.split(":")[0] in {flag.split(":")[0] for flag in described.flags}, described.flags
    cheat = tmp_path / "cheat.py"
    starts_a_thread = "\nimport threading\nthreading.Thread(target=print).start()\n"
    cheat.write_text((SOLUTIONS / "wrong_values.py").read_text() + starts_a_thread)
    rejected = kbench.evaluate(PROBLEM, cheat, "cpu", measure_time=False, trials=1)  # the default rejects cheating
    assert rejected.status == "rejected" and rejected.reason.startswith("threads: "), rejected.reason
    assert rejected.trials == [] and rejected.phase_seconds == {}  # nothing of it ran


def test_evaluate_many_yields_every_verdict_with_its_index():
    pairs = [(PROBLEM, SOLUTIONS / "honest_triton.py"), (PROBLEM, SOLUTIONS / "syntax_error.py")]
    verdicts = dict(kbench.evaluate_many(pairs, ["cpu", "cpu"], measure_time=False, trials=1))
    assert verdicts[0].status == "correct" and verdicts[1].status == "compile_error"


def test_an_executor_runs_one_job_at_a_time_per_device_and_raises_a_jobs_error_here():
    import threading
    import time

    from kbench.judge.executor import LocalExecutor

    running: dict[str, int] = {}
    lock = threading.Lock()

    def run(item: int, device: str) -> int:
        with lock:
            running[device] = running.get(device, 0) + 1
            assert running[device] == 1, "two jobs at once on one device"
        time.sleep(0.01)
        with lock:
            running[device] -= 1
        if item == 7:
            raise ValueError("job 7 failed")
        return item * item

    executor = LocalExecutor(["cpu"])
    assert sorted(executor.map(list(range(5)), run)) == [(i, i * i) for i in range(5)]
    with pytest.raises(ValueError, match="job 7 failed"):
        list(executor.map(list(range(10)), run))
