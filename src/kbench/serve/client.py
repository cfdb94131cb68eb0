"""``RewardClient``: a trainer's side of the reward service, on the standard library alone (urllib), so
that a trainer's environment needs nothing kbench's judge needs.

    client = RewardClient("http://127.0.0.1:8765", token=None)
    reward = client.judge("level1/relu", source, shape="fast_1.0")             # a kbench.rewards.Reward
    rewards = client.judge_many([("level1/relu", a), ("level1/gelu", b)], shape="speedup")

``submit`` returns job ids as soon as the service has committed them; ``result(job_id, wait=S)`` polls.
A full queue (503 busy) is waited out and asked again (``busy_retries`` times); every other refusal is a
``ServiceError`` with the service's status and message. A job that ends without a verdict from the
judge (an infrastructure failure) gives a Reward whose value is None: never a reward.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, Iterable, Sequence

from kbench.rewards import Reward

DEFAULT_URL = "http://127.0.0.1:8765"
POLL_WAIT_SECONDS = 30.0  # each poll asks the service to hold the answer this long for the job to finish


class ServiceError(Exception):
    """The service refused a request (``status``: its HTTP status, 0 where it could not be reached)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{status}: {message}" if status else message)
        self.status, self.message = status, message


class RewardClient:
    """The reward service at ``url`` (``token``: its bearer token, where it needs one)."""

    def __init__(self, url: str = DEFAULT_URL, token: str | None = None, *, timeout: float = 90.0,
                 busy_retries: int = 120):
        self.url, self.token, self.timeout, self.busy_retries = url.rstrip("/"), token, timeout, busy_retries

    # --- the service's routes ----------------------------------------------
    def submit(self, problem: str | None, source: str, shape: str = "correct", baseline: str = "eager", *,
               problem_source: str | None = None) -> str:
        """Queue one job (``problem``: a suite id; or ``problem_source``: a problem file's text); its id."""
        return self._post({**_job(problem, source, shape, baseline, problem_source)})["id"]

    def submit_many(self, jobs: Sequence[dict[str, Any]]) -> list[str]:
        """Queue jobs (dicts of ``problem``/``problem_source``, ``source``, ``shape``, ``baseline``) in one request."""
        return self._post({"jobs": list(jobs)})["ids"]

    def result(self, job_id: str, wait: float = 0.0) -> dict[str, Any]:
        """The job as the service has it (``state``; once ``done``: ``status``, ``reward``, ``verdict``),
        after waiting up to ``wait`` seconds for it to be done."""
        return self._request("GET", f"/v1/jobs/{job_id}?wait={max(0.0, wait):g}")

    def info(self) -> dict[str, Any]:
        return self._request("GET", "/v1/info")

    def problems(self) -> list[str]:
        return self._request("GET", "/v1/problems")["problems"]

    # --- rewards -----------------------------------------------------------
    def judge(self, problem: str | None, source: str, shape: str = "correct", baseline: str = "eager", *,
              problem_source: str | None = None, timeout: float | None = None) -> Reward:
        """Judge one candidate and wait for its reward (``timeout``: seconds, None for as long as it takes)."""
        job_id = self.submit(problem, source, shape, baseline, problem_source=problem_source)
        return self.reward(job_id, timeout)

    def judge_many(self, pairs: Iterable[tuple[str, str]], shape: str = "correct", baseline: str = "eager", *,
                   timeout: float | None = None, batch: int = 32) -> list[Reward]:
        """Judge every ``(problem, source)`` pair; their rewards, in the pairs' order. Submitted in batches of
        ``batch`` (the service judges them as devices free up)."""
        jobs = [_job(problem, source, shape, baseline, None) for problem, source in pairs]
        ids: list[str] = []
        for start in range(0, len(jobs), batch):
            ids.extend(self.submit_many(jobs[start:start + batch]))
        return [self.reward(job_id, timeout) for job_id in ids]

    def reward(self, job_id: str, timeout: float | None = None) -> Reward:
        """The reward of job ``job_id`` once it is done; TimeoutError after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = POLL_WAIT_SECONDS if deadline is None else max(0.0, min(POLL_WAIT_SECONDS, deadline - time.monotonic()))
            job = self.result(job_id, wait=wait)
            if job["state"] == "done":
                return Reward.from_dict(job["reward"])
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} is still {job['state']} after {timeout:g} s")

    # --- HTTP ---------------------------------------------------------------
    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode()
        for attempt in range(self.busy_retries + 1):
            try:
                return self._request("POST", "/v1/jobs", data)
            except ServiceError as exc:
                if exc.status != 503 or attempt == self.busy_retries:
                    raise
                time.sleep(getattr(exc, "retry_after", 1.0))
        raise AssertionError("unreachable")

    def _request(self, method: str, path: str, data: bytes | None = None) -> dict[str, Any]:
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                message = json.loads(raw).get("error", raw.decode(errors="replace"))
            except (ValueError, AttributeError):
                message = raw.decode(errors="replace")[:500]
            error = ServiceError(exc.code, message)
            retry = exc.headers.get("Retry-After", "")
            error.retry_after = float(retry) if retry.replace(".", "", 1).isdigit() else 1.0  # type: ignore[attr-defined]
            raise error from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            raise ServiceError(0, f"the reward service at {self.url} cannot be reached: {exc}") from None


def _job(problem: str | None, source: str, shape: str, baseline: str, problem_source: str | None) -> dict[str, Any]:
    job: dict[str, Any] = {"source": source, "shape": shape, "baseline": baseline}
    if problem_source is not None:
        job["problem_source"] = problem_source
    else:
        job["problem"] = problem
    return job
