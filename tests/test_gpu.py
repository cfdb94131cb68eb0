"""The judge on a CUDA GPU: honest CUDA and Triton kernels, a wrong one, a faulting one."""

import os

import pytest
from conftest import EXAMPLES, SOLUTIONS

import kbench
from kbench.judge.protocol.timing import TimingSettings

pytestmark = pytest.mark.gpu


def test_honest_cuda_load_inline_kernel_is_correct_and_timed_with_events():
    verdict = kbench.evaluate("level1/swish", EXAMPLES / "swish.py", "cuda", size="small", timeout=900)
    assert verdict.status == "correct", verdict.reason
    assert verdict.timing["clock"] == "cuda-events"
    assert verdict.speedup["eager"] > 0
    assert verdict.device_name and verdict.device_name != "cpu"


def test_honest_triton_kernel_is_correct():
    verdict = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cuda", size="small")
    assert verdict.status == "correct", verdict.reason
    assert verdict.baselines["eager"]["timing"]["clock"] == "cuda-events"
    assert verdict.handover == ["device"]  # checked outputs never left the GPU


def test_speed_of_light_is_that_of_the_judged_size():
    """The limit comes from the default size's counts (not the small size the
    other-size trial loads first): 2 x 4 bytes x 16384 x 32768 at 4.8 TB/s."""
    quick = TimingSettings(warmup_calls=3, warmup_seconds=0.0, min_calls=5, max_calls=20, budget_seconds=1.0)
    verdict = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cuda", size="default", trials=1, timing=quick)
    assert verdict.status == "correct", verdict.reason
    if "H200" in (verdict.device_name or ""):
        assert verdict.speed_of_light_ms == pytest.approx(2 * 4 * 16384 * 32768 / 4.8e12 * 1e3)
    assert verdict.speed_of_light_ms < verdict.runtime_ms


def test_worker_pairs_average_and_narrow_on_a_gpu():
    """Three evaluations of the Triton ReLU, each in fresh workers, one verdict: the other-size trial in
    the first pair only, every pair's speedup kept, the average inside its interval."""
    quick = TimingSettings(warmup_calls=3, warmup_seconds=0.0, min_calls=5, max_calls=20, budget_seconds=1.0, pairs=3)
    verdict = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cuda", size="default", trials=1, timing=quick)
    assert verdict.status == "correct", verdict.reason
    assert len(verdict.timing["pair_speedups"]["eager"]) == 3 and len(verdict.seeds["later_pairs"]) == 2
    assert "other_size" in verdict.seeds and all("other_size" not in s for s in verdict.seeds["later_pairs"])
    low, high = verdict.speedup_interval["eager"]
    assert low < verdict.speedup["eager"] < high


def test_wrong_triton_kernel_is_incorrect():
    verdict = kbench.evaluate("level1/relu", SOLUTIONS / "gpu_wrong_triton.py", "cuda", size="small")
    assert verdict.status == "incorrect"
    assert "values" in verdict.reason


def test_output_on_the_wrong_device_is_incorrect():
    verdict = kbench.evaluate(
        "level1/relu", SOLUTIONS / "gpu_returns_cpu.py", "cuda", size="small", measure_time=False, policy="off"
    )
    assert verdict.status == "incorrect"
    assert "device" in verdict.reason


def test_illegal_memory_access_does_not_affect_the_next_evaluation():
    faulty = kbench.evaluate("level1/relu", SOLUTIONS / "gpu_illegal_access.py", "cuda", size="small")
    assert faulty.status in {"runtime_error", "crashed"}, faulty.reason
    assert "illegal memory access" in faulty.reason or "CUDA" in faulty.reason
    honest = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cuda", size="small")
    assert honest.status == "correct", honest.reason


def test_cuda_graph_timing_times_replays_of_candidate_and_eager():
    graphed = TimingSettings(min_calls=5, max_calls=20, budget_seconds=1.0, cuda_graph=True)
    verdict = kbench.evaluate("level1/relu", EXAMPLES / "relu.py", "cuda", size="small", timing=graphed)
    assert verdict.status == "correct", verdict.reason
    assert verdict.timing["settings"]["cuda_graph"] is True
    assert verdict.baselines["eager"]["timing"]["settings"]["cuda_graph"] is True
    assert verdict.speedup["eager"] > 0


def test_a_graphed_column_reads_each_calls_values_from_its_fixed_inputs():
    """reduce-overhead on inputs marked static must read what was copied into
    them for each call, not a copy of the first call's values."""
    import torch

    from kbench.judge.worker.graphs import StaticInputs

    staged = StaticInputs(torch.compile(lambda x: torch.relu(x) * 2, mode="reduce-overhead"))
    for value in (-1.0, 1.0, 2.0, 3.0, -4.0, 5.0):
        x = torch.full((64, 64), value, device="cuda")
        out = staged.stage([x])()
        torch.cuda.synchronize()
        assert out.eq(max(value, 0.0) * 2).all(), value


def test_graphed_columns_are_measured_under_cuda_graph_timing(tmp_path):
    graphed = TimingSettings(min_calls=5, max_calls=20, budget_seconds=1.0, rounds=2, cuda_graph=True)
    measured = kbench.judge.measure_baselines(
        "level1/relu", "cuda", ["compile-reduce-overhead", "cudagraphs"], size="small", timing=graphed,
        cache=tmp_path / "baselines.sqlite",
    )
    assert set(measured) == {"eager", "compile-reduce-overhead", "cudagraphs"}
    assert all(m["runtime_ms"] > 0 for m in measured.values())


def test_a_candidate_that_cannot_be_captured_is_a_runtime_error_under_cuda_graph_timing():
    graphed = TimingSettings(min_calls=5, max_calls=20, budget_seconds=1.0, cuda_graph=True)
    verdict = kbench.evaluate(
        "level1/relu", SOLUTIONS / "gpu_uncapturable.py", "cuda", size="small", timing=graphed, policy="off"
    )
    assert verdict.status == "runtime_error", verdict.reason
    assert "captur" in verdict.reason
    plain = kbench.evaluate("level1/relu", SOLUTIONS / "gpu_uncapturable.py", "cuda", size="small", policy="off")
    assert plain.status == "correct", plain.reason


def test_a_new_placement_moves_the_next_buffers():
    import torch

    from kbench.judge.protocol.timing import new_placement

    device = torch.device("cuda")
    where = []
    for round_index in (0, 1):  # spacers of 48 and 16 MiB
        spacer = new_placement(device, round_index)
        where.append(torch.empty(64 << 20, dtype=torch.uint8, device=device).data_ptr())
        del spacer
    assert where[0] != where[1]


def test_a_device_buffer_crosses_out_of_the_sandbox_and_nothing_beyond_it_can_be_mapped(tmp_path):
    """What carries checked outputs from a sandboxed candidate to the reference
    (kbench.judge.exchange.vmm): a descriptor over a Unix socket, across PID namespaces."""
    import socket
    import subprocess
    import sys

    import torch

    from kbench.judge.exchange import vmm
    from kbench.judge.processes.devices import worker_env
    from kbench.judge.processes.process import worker_import_path
    from kbench.judge.processes.sandbox import find_sandbox, give_to_candidate

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    child = (
        "import os, socket, sys; sys.path[:0] = os.environ['KBENCH_WORKER_PATH'].split(os.pathsep)\n"
        "import torch; from kbench.judge.exchange import vmm\n"
        "channel = socket.socket(fileno=int(sys.argv[1]))\n"
        "buffer = vmm.ExportedBuffer(1 << 20, 0)\n"
        "buffer.tensor().copy_(torch.arange(1 << 20, device='cuda') % 251)\n"
        "fd = buffer.export(); vmm.send_fd(channel, fd); os.close(fd)\n"
        "channel.recv(1)\n"
    )
    env = {**worker_env("cuda"), "KBENCH_WORKER_PATH": os.pathsep.join(worker_import_path())}
    give_to_candidate(tmp_path)
    argv = find_sandbox().wrap([sys.executable, "-I", "-c", child, str(theirs.fileno())], scratch=tmp_path,
                               readable=worker_import_path(), env=env)
    process = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), env=env, cwd=tmp_path)
    theirs.close()
    try:
        fd = vmm.receive_fd(ours, timeout=120)
        assert fd is not None, "no descriptor came from the sandbox"
        with vmm.imported(fd, 1 << 20, 0) as buffer:
            assert torch.equal(buffer.long(), torch.arange(1 << 20, device="cuda") % 251)
        with pytest.raises(vmm.CudaError), vmm.imported(fd, 64 << 20, 0):  # more than was allocated
            pass
        os.close(fd)
    finally:
        ours.send(b"x")
        process.wait(timeout=60)


def test_a_models_run_judges_on_the_gpu_through_its_judging_threads(tmp_path, monkeypatch):
    """A model's run (here the replay provider) judges on a thread per GPU
    given, with workers started ahead and the GPU's turn taken per evaluation."""
    import shutil

    from typer.testing import CliRunner

    from kbench.cli import app
    from kbench.runs.store import Store

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KBENCH_DB", raising=False)
    (tmp_path / "solutions").mkdir()
    shutil.copy(EXAMPLES / "relu.py", tmp_path / "solutions" / "relu.py")
    done = CliRunner().invoke(app, ["run", "--run", "r", "--model", f"replay/{tmp_path / 'solutions'}",
                                    "-p", "level1/relu", "--device", "cuda", "--gpus", "0", "--size", "small",
                                    "--baseline", "eager", "--plain"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    with Store(tmp_path / "kbench.db") as store:
        (evaluation,) = store.evaluations("r")
        (session,) = store.sessions("r")
    assert evaluation.status == "correct", evaluation.reason
    assert session.manifest.executor["devices"] == ["cuda:0"]


def test_a_launch_lead_is_queued_ahead_of_the_start_event_and_out_of_the_clock():
    """With TimingSettings.launch_lead_us the GPU sleeps that long before the start event: the clock
    of a call that launches nothing reads far below the lead, while the host waited it out."""
    import torch

    from kbench.judge.protocol.timing import Clock

    lead_us = 1000.0
    clock = Clock(torch.device("cuda"), lead_us=lead_us)
    readings = [clock.time_call(lambda: torch.cuda._sleep(10))[:2] for _ in range(5)]
    assert all(clock_ms < lead_us / 1000 / 2 for clock_ms, _ in readings)
    assert all(host_ms > lead_us / 1000 / 2 for _, host_ms in readings)
