"""A bounded load test of the reward service on localhost (issue 61): many clients, a mix of honest, wrong,
cheating and malformed candidates, the service killed (SIGKILL) and restarted once mid-queue.

Starts `kbench serve` on a loopback port with a job store in a temporary folder (on a CPU: correctness only,
`--no-timing`, 2 trials, the strict policy under which every exploit of tests/exploits is caught), then
``--clients`` threads send ``--requests`` requests between them:

- honest: the suite's examples and the honest corpus's level-1 files that run on a CPU (tests/honest);
- wrong: the same, with every output moved a little (a ModelNew wrapping the honest one);
- cheating: the exploits of tests/exploits/cases.py that a CPU run catches;
- malformed: bodies that must get a 4xx (malformed JSON, binary or huge sources, unknown problems, wrong types,
  unknown shapes, empty batches).

A 503 (busy) is waited out and sent again, as RewardClient does. Once ``--kill-after`` jobs are done the service
is killed with SIGKILL and started again on the same store; clients whose request met the dead service send it
again. At the end every acknowledged job must be done in the store (a verdict, or an infrastructure status that
is never a reward), every malformed request must have had a 4xx, and each category's statuses are counted
against what it should get. Prints a table and writes a JSON summary.

    PYTHONPATH=src .venv/bin/python benchmarks/serve_load.py --out docs/measurements/2026-12-06-cpu-serve-load.json
    PYTHONPATH=src .venv/bin/python benchmarks/serve_load.py --requests 40 --clients 4 --kill-after 5 --out /tmp/l.json  # smoke
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from exploits.cases import CASES  # noqa: E402
from honest.corpus import CORPUS  # noqa: E402

from kbench.serve.jobs import JobStore  # noqa: E402

EXAMPLES = {"level1/relu": "relu.py", "level1/softmax": "softmax.py", "level1/swish": "swish.py"}
WRONG_SUFFIX = '''

_Honest = ModelNew


class ModelNew(_Honest):
    """The honest solution above, every output moved by 1%: wrong."""

    def forward(self, *args):
        return super().forward(*args) * 1.01 + 0.01
'''
NOT_DONE_STATUSES = {"infra_error", "problem_error"}


def candidates() -> dict[str, list[tuple[str, str, set[str]]]]:
    """Per category, (problem, source, the statuses it should get)."""
    honest = [(p, (ROOT / "src/kbench/suite/examples" / f).read_text()) for p, f in EXAMPLES.items()]
    honest += [(h.problem, h.path.read_text()) for h in CORPUS
               if h.cpu_subset and not h.style_flags and "cpu" in h.devices and h.level == 1]
    cheats = [(c.problem, c.exploit_path.read_text(), {c.status}) for c in CASES
              if c.device == "cpu" and c.gap is None and not c.measure_time and c.trials == 2 and c.size == "small"
              and not c.problem.startswith("/") and c.status in ("rejected", "incorrect") and not c.cuda_graph]
    return {"honest": [(p, s, {"correct"}) for p, s in honest],
            "wrong": [(p, s + WRONG_SUFFIX, {"incorrect"}) for p, s in honest],
            "cheating": cheats}


def malformed() -> list[tuple[str, bytes]]:
    ok = {"problem": "level1/relu", "source": "import torch\n"}
    return [
        ("malformed JSON", b'{"problem": "level1/relu", "source": '),
        ("not UTF-8", b"\xff\xfe\x00\x01" * 16),
        ("binary source", json.dumps(ok | {"source": "\x7fELF\x02\x01\x01\x00\x00"}).encode()),
        ("huge source", json.dumps(ok | {"source": "x" * (300 * 1024)}).encode()),
        ("unknown problem", json.dumps(ok | {"problem": "level9/does_not_exist"}).encode()),
        ("a path as problem", json.dumps(ok | {"problem": "/etc/passwd"}).encode()),
        ("source not a string", json.dumps(ok | {"source": ["import torch"]}).encode()),
        ("no source", json.dumps({"problem": "level1/relu"}).encode()),
        ("unknown shape", json.dumps(ok | {"shape": "fastest"}).encode()),
        ("speed shape untimed", json.dumps(ok | {"shape": "speedup"}).encode()),
        ("a list, not an object", b'[{"problem": "level1/relu"}]'),
        ("empty batch", b'{"jobs": []}'),
        ("unknown field", json.dumps(ok | {"priority": 1}).encode()),
        ("problem as text, not allowed", json.dumps({"problem_source": "class Model: pass", "source": "x"}).encode()),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """`kbench serve` as a process of its own, to be killed and started again."""

    def __init__(self, store: Path, port: int, log: Path, options: list[str]):
        self.store, self.port, self.log, self.options = store, port, log, options
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> float:
        began = time.monotonic()
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kbench", "serve", "--port", str(self.port), "--job-store", str(self.store),
                 *self.options], stdout=log, stderr=log, env=os.environ | {"PYTHONPATH": str(ROOT / "src")})
        while time.monotonic() - began < 120:
            if self.process.poll() is not None:
                raise RuntimeError(f"the service exited ({self.process.returncode}): {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/v1/health", timeout=2):
                    return time.monotonic() - began
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the service did not start in 120 s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def request(url: str, method: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
    """(status, JSON answer); status 0 where the service could not be reached."""
    req = urllib.request.Request(url + path, data=body, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read())
        except ValueError:
            return exc.code, {}
    except (OSError, ValueError) as exc:
        return 0, {"error": str(exc)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--malformed-share", type=float, default=0.2)
    parser.add_argument("--kill-after", type=int, default=40, help="kill the service once this many jobs are done")
    parser.add_argument("--max-queue", type=int, default=48)
    parser.add_argument("--budget", type=float, default=3600, help="seconds for the whole test")
    parser.add_argument("--seed", type=int, default=61)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--serve-options", default="--device cpu --no-timing --trials 2 --policy strict",
                        help="what `kbench serve` is given besides its port and store")
    args = parser.parse_args()
    started_at, began = datetime.now(timezone.utc), time.monotonic()
    rng = random.Random(args.seed)
    pool, bad = candidates(), malformed()
    n_bad = round(args.requests * args.malformed_share)
    plan: list[tuple[str, object]] = [("malformed", bad[i % len(bad)]) for i in range(n_bad)]
    kinds = list(pool)
    for i in range(args.requests - n_bad):
        kind = kinds[i % len(kinds)]
        plan.append((kind, rng.choice(pool[kind])))
    rng.shuffle(plan)

    folder = Path(tempfile.mkdtemp(prefix="kbench-serve-load-"))
    service = Service(folder / "jobs.db", free_port(), folder / "serve.log",
                      [*args.serve_options.split(), "--max-queue", str(args.max_queue)])
    first_start = service.start()
    lock = threading.Lock()
    todo = list(enumerate(plan))
    accepted: dict[str, tuple[str, set[str], str]] = {}  # id -> (kind, expected statuses, problem)
    answers: list[dict] = []
    counts = Counter()
    down = threading.Event()

    def client() -> None:
        while time.monotonic() - began < args.budget:
            with lock:
                if not todo:
                    return
                index, (kind, item) = todo.pop()
            if kind == "malformed":
                name, body = item
            else:
                problem, source, expected = item
                body = json.dumps({"problem": problem, "source": source, "shape": "correct"}).encode()
            while time.monotonic() - began < args.budget:
                status, answer = request(service.url, "POST", "/v1/jobs", body)
                if status == 503:
                    with lock:
                        counts["busy answers"] += 1
                    time.sleep(2 + rng.random())
                    continue
                if status == 0:  # the service is down (killed): send it again once it is back
                    with lock:
                        counts["requests sent again after the kill"] += 1
                    time.sleep(0.5)
                    continue
                break
            with lock:
                if kind == "malformed":
                    answers.append({"request": index, "case": name, "status": status, "error": answer.get("error")})
                elif status == 202:
                    accepted[answer["id"]] = (kind, expected, problem)
                else:
                    answers.append({"request": index, "case": kind, "status": status, "error": answer.get("error"),
                                    "unexpected": True})

    def killer() -> None:
        while time.monotonic() - began < args.budget:
            time.sleep(0.5)
            with _opened(service.store) as jobs:
                done = jobs.counts()["done"]
            if done >= args.kill_after:
                break
        with _opened(service.store) as jobs:
            before = jobs.counts()
        down.set()
        service.kill()
        killed_at = time.monotonic() - began
        restart = service.start()
        counts["killed at s"], counts["restart s"] = round(killed_at, 1), round(restart, 1)
        counts.update({f"at the kill: {state}": n for state, n in before.items()})

    threads = [threading.Thread(target=client, daemon=True) for _ in range(args.clients)]
    kill_thread = threading.Thread(target=killer, daemon=True)
    for thread in [*threads, kill_thread]:
        thread.start()
    for thread in threads:
        thread.join()
    kill_thread.join(timeout=max(1.0, args.budget - (time.monotonic() - began)))
    submitted_s = time.monotonic() - began

    results: dict[str, dict] = {}
    for job_id in accepted:
        while time.monotonic() - began < args.budget:
            status, job = request(service.url, "GET", f"/v1/jobs/{job_id}?wait=60")
            if status == 200 and job["state"] == "done":
                results[job_id] = job
                break
            if status == 0:
                time.sleep(1)
    wall = time.monotonic() - began
    service.stop()

    with _opened(service.store) as jobs:
        stored = {job.id: job for job in jobs.all()}
    lost = [i for i in accepted if i not in stored]
    not_done = [i for i in accepted if i in stored and stored[i].state != "done"]
    no_verdict = [i for i in accepted if i in stored and stored[i].state == "done" and stored[i].verdict is None
                  and stored[i].status not in NOT_DONE_STATUSES]
    by_kind: dict[str, Counter] = {}
    mismatches = []
    for job_id, (kind, expected, problem) in accepted.items():
        job = stored.get(job_id)
        status = job.status if job else "lost"
        by_kind.setdefault(kind, Counter())[status] += 1
        if status not in expected:
            mismatches.append({"id": job_id, "kind": kind, "problem": problem, "status": status,
                               "expected": sorted(expected), "reason": (job.reward or {}).get("reason") if job else None})
    bad_answers = [a for a in answers if not 400 <= a["status"] < 500]
    summary = {
        "what": "benchmarks/serve_load.py: the reward service under load on localhost, killed and restarted once",
        "date": started_at.date().isoformat(), "started_at": started_at.isoformat(timespec="seconds"),
        "command": " ".join(["PYTHONPATH=src", "python", *sys.argv]),
        "machine": {"node": platform.node(), "cpus": os.cpu_count(), "cpu": _cpu_model(), "python": platform.python_version(),
                    "platform": platform.platform(), "load_at_start": os.getloadavg()},
        "serve_options": args.serve_options, "max_queue": args.max_queue, "requests": args.requests,
        "clients": args.clients, "accepted": len(accepted),
        "malformed": len([a for a in answers if a["case"] not in pool]),
        "malformed_statuses": dict(Counter(str(a["status"]) for a in answers)),
        "events": dict(counts), "first_start_s": round(first_start, 1), "submitted_s": round(submitted_s, 1),
        "wall_s": round(wall, 1), "jobs_per_minute": round(60 * len(results) / wall, 2),
        "statuses_by_kind": {k: dict(v) for k, v in by_kind.items()},
        "unacknowledged_jobs_in_store": len(set(stored) - set(accepted)),
        "checks": {
            "every accepted job is done in the store": not lost and not not_done,
            "every done job has a verdict or an infrastructure status": not no_verdict,
            "every malformed request got a 4xx": not bad_answers,
            "the service was killed and restarted": "killed at s" in counts,
        },
        "lost": lost, "not_done": not_done, "no_verdict": no_verdict, "non_4xx_answers": bad_answers,
        "status_mismatches": mismatches,
        "malformed_answers": sorted({(a["case"], a["status"], a["error"]) for a in answers}),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2, default=list) + "\n")
    print(f"{'category':<12} {'accepted':>8}  statuses")
    for kind, statuses in sorted(by_kind.items()):
        print(f"{kind:<12} {sum(statuses.values()):>8}  {dict(statuses)}")
    print(f"{'malformed':<12} {summary['malformed']:>8}  HTTP {summary['malformed_statuses']}")
    print(f"events: {dict(counts)}; wall {wall:.0f} s; {summary['jobs_per_minute']} jobs/min")
    for check, ok in summary["checks"].items():
        print(f"{'PASS' if ok else 'FAIL'}  {check}")
    print(f"status mismatches: {len(mismatches)}; summary: {args.out}")
    sys.exit(0 if all(summary["checks"].values()) else 1)


class _opened:
    """A job store opened for a moment (read by the test while the service writes it)."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> JobStore:
        self.store = JobStore(self.path)
        return self.store

    def __exit__(self, *exc: object) -> None:
        self.store.close()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
