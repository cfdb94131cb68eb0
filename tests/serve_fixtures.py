"""The reward service with a stand-in judge, for tests of the service itself (its queue, store, limits and
token), in this process (``running``) or as a process of its own to kill (``python tests/serve_fixtures.py``).

The stand-in reads what to answer from the candidate's source: a line ``# verdict: STATUS [SPEEDUP]``
(``correct 1.5``, ``rejected``, ``raise`` for a harness fault), sleeping ``# sleep: S`` seconds first,
so a test decides every outcome and how long it takes without running a kernel.
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

SRC = Path(__file__).resolve().parent.parent / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))

import uvicorn  # noqa: E402

from kbench import Verdict  # noqa: E402
from kbench.serve.app import create_app  # noqa: E402
from kbench.serve.jobs import JobStore  # noqa: E402
from kbench.serve.payload import Limits  # noqa: E402
from kbench.serve.service import JudgeSettings, Service, local_slots  # noqa: E402

PROBLEMS = frozenset({"level1/relu", "level1/gelu"})


def candidate(status: str = "correct", speedup: float = 1.5, sleep: float = 0.0, note: str = "") -> str:
    return (f"# verdict: {status} {speedup}\n# sleep: {sleep}\n# {note}\nimport torch\n"
            "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.relu()\n")


def stand_in_evaluate(problem, solution, device, **options) -> Verdict:
    """A verdict as the candidate's source asks for it (see the module's docstring)."""
    source = solution.source
    if sleep := re.search(r"# sleep: ([\d.]+)", source):
        time.sleep(float(sleep.group(1)))
    status, speedup = re.search(r"# verdict: (\w+) ([\d.]+)", source).groups()
    if status == "raise":
        raise OSError("the stand-in's machine fault")
    correct = status == "correct"
    speed = float(speedup) if correct else None
    return Verdict(problem=problem.id, problem_path=str(problem.path), problem_sha256=problem.sha256,
                   solution_path=None, solution_sha256=solution.sha256, device=device, size="small", status=status,
                   correct=correct, reason="stand-in: " + ("5 of 5 trials match" if correct else f"{status} by rule x"),
                   speedup={"eager": speed}, speedup_interval={"eager": [speed * 0.95, speed * 1.05]} if speed else {},
                   seeds={"init": 1}, sandbox={"kind": "stand-in"})


def make_service(store: Path, *, max_pending: int = 64, workers: int = 1, limits: Limits = Limits()) -> Service:
    return Service(JobStore(store), JudgeSettings(size="small"), local_slots(["cpu"] * workers),
                   store.with_suffix(".problems"), limits=limits, max_pending=max_pending,
                   evaluate=stand_in_evaluate, problems=PROBLEMS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running(service: Service, token: str | None = None) -> Iterator[str]:
    """The service on a loopback port in a thread of this process; its URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(service, token), host="127.0.0.1", port=port,
                                           log_level="error", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    service.start()
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test service did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        service.stop()


if __name__ == "__main__":  # python tests/serve_fixtures.py STORE PORT: a service to kill
    store, port = Path(sys.argv[1]), int(sys.argv[2])
    service = make_service(store)
    service.start()
    uvicorn.run(create_app(service), host="127.0.0.1", port=port, log_level="error", access_log=False)
