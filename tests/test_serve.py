"""The reward service: its routes and their refusals, its bounded queue, its token, and no accepted job lost
when the service is killed mid-queue (kill -9) and started again. A stand-in judge decides every outcome
(tests/serve_fixtures.py), so these take seconds; one test judges real candidates through ``kbench serve``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from serve_fixtures import candidate, free_port, make_service, running  # noqa: E402

from kbench.rewards import Reward  # noqa: E402
from kbench.serve.client import RewardClient, ServiceError  # noqa: E402
from kbench.serve.jobs import JobStore  # noqa: E402
from kbench.serve.payload import Limits  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HONEST_RELU = (ROOT / "src" / "kbench" / "suite" / "examples" / "relu.py").read_text()


def post(url: str, body: bytes, token: str | None = None, content_type: str = "application/json"):
    """(status, JSON answer) of a raw POST /v1/jobs."""
    request = urllib.request.Request(url + "/v1/jobs", data=body, method="POST",
                                     headers={"Content-Type": content_type} | ({"Authorization": f"Bearer {token}"}
                                                                               if token else {}))
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(url: str, path: str, token: str | None = None):
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture
def service(tmp_path):
    made = make_service(tmp_path / "jobs.db", limits=Limits(max_source_bytes=4096, max_batch=4))
    with running(made) as url:
        yield url, made


def test_single_and_batch_jobs_return_verdict_reward_interval_and_provenance(service):
    url, _ = service
    client = RewardClient(url)
    reward = client.judge("level1/relu", candidate("correct", 1.5), shape="speedup", baseline="eager")
    assert isinstance(reward, Reward) and reward.value == pytest.approx(1.425) and reward.interval[0] == reward.value
    assert reward.provenance["service"]["judge"]["size"] == "small" and reward.provenance["sandbox"] == {"kind": "stand-in"}
    rewards = client.judge_many([("level1/relu", candidate("rejected")), ("level1/gelu", candidate("correct", 0.8)),
                                 ("level1/relu", candidate("raise"))], shape="fast_1.0")
    assert [r.value for r in rewards] == [0.0, 0.0, None]
    assert rewards[0].reason.startswith("rejected: ") and "not above 1" in rewards[1].reason
    assert rewards[2].status == "infra_error" and "OSError" in rewards[2].reason
    job_id = client.submit("level1/relu", candidate(), shape="correct")
    job = client.result(job_id, wait=10)
    assert job["state"] == "done" and job["status"] == "correct" and job["verdict"]["problem"] == "level1/relu"
    assert job["reward"]["value"] == 1.0 and client.problems() == ["level1/gelu", "level1/relu"]
    assert get(url, "/v1/jobs/" + "0" * 32)[0] == 404 and get(url, "/v1/jobs/../etc")[0] == 404


@pytest.mark.parametrize("body, status, words", [
    (b"{not json", 400, "malformed JSON"),
    (b"\xff\xfe\x00binary", 400, "not UTF-8"),
    (b"[1, 2]", 422, "must be a JSON object"),
    (json.dumps({"problem": "level1/relu"}).encode(), 422, '"source" is required'),
    (json.dumps({"problem": "level1/relu", "source": 42}).encode(), 422, "must be a string, not a number"),
    (json.dumps({"problem": ["level1/relu"], "source": "x"}).encode(), 422, "must be a string"),
    (json.dumps({"problem": "level1/nope", "source": "x = 1"}).encode(), 422, "unknown problem 'level1/nope'"),
    (json.dumps({"problem": "/etc/passwd", "source": "x = 1"}).encode(), 422, "unknown problem"),
    (json.dumps({"problem": "level1/relu", "source": "x\u0000\u0001y"}).encode(), 422, "binary"),
    (b'{"problem": "level1/relu", "source": "\\ud800"}', 422, "unpaired surrogate"),
    (json.dumps({"problem": "level1/relu", "source": "x" * 5000}).encode(), 413, "more than the 4096"),
    (json.dumps({"problem": "level1/relu", "source": "x = 1", "shape": "fastest"}).encode(), 422, "unknown reward shape"),
    (json.dumps({"problem": "level1/relu", "source": "x = 1", "baseline": "compile", "shape": "speedup"}).encode(), 422,
     "it times eager"),
    (json.dumps({"problem": "level1/relu", "source": "x = 1", "sauce": 1}).encode(), 422, "unknown fields sauce"),
    (json.dumps({"problem_source": "class Model: pass", "source": "x = 1"}).encode(), 403, "--allow-problem-source"),
    (json.dumps({"jobs": []}).encode(), 422, "non-empty list"),
    (json.dumps({"jobs": [{"problem": "level1/relu", "source": "x = 1"}] * 5}).encode(), 413, "at most 4"),
    (json.dumps({"jobs": [{"problem": "level1/relu", "source": "x = 1"}, {"problem": "level9/x", "source": "y"}]}
                ).encode(), 422, "jobs[1]: unknown problem"),
])
def test_bad_payloads_get_a_clear_4xx_and_change_nothing(service, body, status, words):
    url, made = service
    before = made.jobs.counts()
    answer = post(url, body)
    assert answer[0] == status and words in answer[1]["error"], answer
    assert made.jobs.counts() == before


def test_a_huge_body_is_refused_before_it_is_read(service):
    url, made = service
    answer = post(url, b'{"source": "' + b"x" * (made.limits.max_body_bytes + 10) + b'"}')
    assert answer[0] == 413 and "more than" in answer[1]["error"]
    assert get(url, "/v1/jobs/abc?wait=soon")[0] == 422


def test_problem_files_as_text_where_the_service_allows_them(tmp_path):
    made = make_service(tmp_path / "jobs.db", limits=Limits(allow_problem_source=True))
    problem_source = (ROOT / "src" / "kbench" / "suite" / "level1" / "relu.py").read_text()
    with running(made) as url:
        client = RewardClient(url)
        reward = client.judge(None, candidate("correct", 2.0), shape="fast_1.0", problem_source=problem_source)
        assert reward.value == 1.0 and reward.problem.startswith("inline/")
        with pytest.raises(ServiceError, match="not a usable problem.*defines no class Model"):
            client.submit(None, candidate(), problem_source="def get_inputs():\n    return []\n")


def test_a_full_queue_answers_busy_and_stores_nothing(tmp_path):
    made = make_service(tmp_path / "jobs.db", max_pending=2)
    with running(made) as url:
        client = RewardClient(url, busy_retries=0)
        slow = [client.submit("level1/relu", candidate(sleep=1.0, note=str(i))) for i in range(2)]
        with pytest.raises(ServiceError) as refused:
            client.submit("level1/relu", candidate())
        assert refused.value.status == 503 and "busy" in refused.value.message
        assert made.jobs.counts()["done"] + made.jobs.counts()["queued"] + made.jobs.counts()["running"] == 2
        assert all(client.reward(job_id, timeout=20).value == 1.0 for job_id in slow)
        assert client.judge("level1/relu", candidate(), timeout=20).value == 1.0  # room again


def test_a_token_guards_every_route_but_the_health_check(tmp_path):
    with running(make_service(tmp_path / "jobs.db"), token="s3cret") as url:
        assert get(url, "/v1/health") == (200, {"status": "ok"})
        for path in ("/v1/info", "/v1/problems", "/v1/jobs/" + "0" * 32):
            assert get(url, path)[0] == 401 and get(url, path, token="wrong")[0] == 401
        assert post(url, b"{}", token="wrong")[0] == 401
        with pytest.raises(ServiceError, match="401"):
            RewardClient(url).judge("level1/relu", candidate())
        assert RewardClient(url, token="s3cret").judge("level1/relu", candidate(), timeout=20).value == 1.0


def test_serve_refuses_to_listen_beyond_loopback_without_a_token(monkeypatch):
    from typer.testing import CliRunner

    from kbench.cli import app

    monkeypatch.delenv("KBENCH_SERVE_TOKEN", raising=False)
    done = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--device", "cpu"])
    assert done.exit_code == 2 and "give --token" in done.output


def start(store: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "serve_fixtures.py"), str(store), str(port)],
                               env=os.environ | {"PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if get(f"http://127.0.0.1:{port}", "/v1/health")[0] == 200:
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the service did not start: {process.stderr.read().decode()[-2000:]}")


def test_killed_mid_queue_and_restarted_no_accepted_job_is_lost(tmp_path):
    store, port = tmp_path / "jobs.db", free_port()
    url = f"http://127.0.0.1:{port}"
    first = start(store, port)
    try:
        client = RewardClient(url)
        ids = client.submit_many([{"problem": "level1/relu", "source": candidate(sleep=0.8, note=str(i))}
                                  for i in range(6)])
        while client.result(ids[1])["state"] != "running":
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    left = JobStore(store)  # what the killed process left: every acknowledged job, one of them running
    try:
        states = [left.get(job_id).state for job_id in ids]
    finally:
        left.close()
    assert "done" not in states[2:] and states[1] == "running" and None not in states
    second = start(store, port)
    try:
        jobs = [client.result(job_id, wait=30) for job_id in ids]
        assert [job["state"] for job in jobs] == ["done"] * 6
        assert all(job["status"] == "correct" and job["reward"]["value"] == 1.0 and job["verdict"] for job in jobs)
        assert jobs[1]["attempts"] == 2  # it was running when killed, and judged again
    finally:
        second.terminate()
        second.wait(timeout=10)


@pytest.mark.slow
def test_kbench_serve_judges_real_candidates(tmp_path):
    """The real judge behind the real command: an honest kernel, a wrong one and a cheat, correctness only."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "kbench", "serve", "--port", str(port), "--device", "cpu",
                                "--no-timing", "--trials", "2", "--job-store", str(tmp_path / "jobs.db")],
                               env=os.environ | {"PYTHONPATH": str(ROOT / "src")}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if get(url, "/v1/health")[0] == 200:
                    break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, process.stderr.read().decode()[-2000:]
                time.sleep(0.2)
        cheat = (ROOT / "tests" / "exploits" / "inplace_return_input.py").read_text()
        wrong = HONEST_RELU.replace("tl.maximum(x, 0.0)", "tl.maximum(x, 0.5)")
        assert wrong != HONEST_RELU
        rewards = RewardClient(url).judge_many([("level1/relu", HONEST_RELU), ("level1/relu", wrong),
                                                ("level1/relu", cheat)], shape="correct", timeout=240)
        assert [r.status for r in rewards] == ["correct", "incorrect", "rejected"], [r.reason for r in rewards]
        assert [r.value for r in rewards] == [1.0, 0.0, 0.0]
        assert rewards[0].provenance["sandbox"]["kind"] == "bubblewrap"
        with pytest.raises(ServiceError, match="needs a speedup over 'eager'.*without timing"):
            RewardClient(url).submit("level1/relu", HONEST_RELU, shape="speedup")
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_job_the_service_died_judging_three_times_ends_as_an_infra_error(tmp_path):
    """A candidate that takes the whole service down with it is not retried for ever: never a reward."""
    made = make_service(tmp_path / "jobs.db")
    from kbench.serve.payload import parse_jobs

    new, _ = parse_jobs(json.dumps({"problem": "level1/relu", "source": candidate()}).encode(), Limits(),
                        made.problems, ("eager",))
    (job_id,) = made.jobs.add(new, max_pending=10)
    for _ in range(2):  # two deaths mid-evaluation: claimed, the process gone, queued again by the next
        assert made.jobs.claim().id == job_id
        made.jobs.requeue_running(max_attempts=99)
    assert made.jobs.claim().attempts == 3  # and the third, left running
    made.start()
    try:
        job = made.jobs.get(job_id)
        assert job.state == "done" and job.status == "infra_error" and job.reward["value"] is None
        assert "stopped 3 times" in job.reward["reason"]
    finally:
        made.stop()


def test_any_executor_through_map_slots_and_its_failures_are_infra_errors(tmp_path):
    """--executor ray's path (MapSlots over an executor's map), here over the local executor; an executor that
    fails (a lost Ray worker) fails the job as infra_error, and the service goes on."""
    from serve_fixtures import PROBLEMS, stand_in_evaluate

    from kbench import judge
    from kbench.serve.service import JudgeSettings, Service, map_slots

    class Lost:
        def __init__(self):
            self.inner, self.calls = judge.LocalExecutor(["cpu"], build_jobs=0, ahead=False), 0

        def describe(self):
            return {"kind": "flaky"}

        def map(self, items, run, prebuild=None, needs_build=None):
            self.calls += 1
            if self.calls == 2:
                raise ConnectionError("the Ray worker was lost")
            return self.inner.map(items, run)

    made = Service(JobStore(tmp_path / "jobs.db"), JudgeSettings(), map_slots(Lost(), 2), tmp_path,
                   evaluate=stand_in_evaluate, problems=PROBLEMS)
    with running(made) as url:
        rewards = [RewardClient(url).judge("level1/relu", candidate(note=str(i)), timeout=30) for i in range(3)]
    assert [r.status for r in rewards] == ["correct", "infra_error", "correct"]
    assert rewards[1].value is None and "ConnectionError: the Ray worker was lost" in rewards[1].reason


def test_the_job_store_refuses_a_file_that_is_not_one(tmp_path):
    from kbench.runs.store import Store
    from kbench.serve.jobs import JobStoreError

    Store(tmp_path / "run.db").close()
    with pytest.raises(JobStoreError, match="not a kbench service's job store"):
        JobStore(tmp_path / "run.db")
