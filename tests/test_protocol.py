"""The judge never raises at what a candidate's process writes: every answer,
however malformed or forged, ends ``evaluate`` in a verdict.

No worker process runs here: both workers are ``ScriptedWorker``s, which answer
the judge's commands on a real pipe (written by a thread, as a process would)
as an honest worker does, except where a test swaps one answer of the
candidate's for a crafted one: named attacks with the verdict each must get,
then seeded random ones (random JSON, fields of the wrong type or value, bytes
that are not JSON, answers too large or too deep, the pipe closed), of which
only a verdict is asked.
"""

from __future__ import annotations

import json
import math
import os
import random
import socket
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

import pytest
from exploits.cases import RELU

import kbench
from kbench.judge import evaluation
from kbench.judge.processes.process import MAX_ANSWER_BYTES, OutputTail, Worker
from kbench.judge.protocol.timing import TimingSettings

TWIN = Path(__file__).parent / "exploits" / "twin_relu.py"
TIMING = TimingSettings(warmup_calls=1, warmup_seconds=0.0, min_calls=3, max_calls=3, budget_seconds=5.0, rounds=2)
LAYOUT = {"tree": {"tensor": [0, "float32", [1]]}, "nbytes": 4}
STATUSES = {"correct", "incorrect", "rejected", "crashed", "timeout", "runtime_error", "compile_error"}


class _NoProcess:
    """What a ScriptedWorker has for a process: running until closed, then exited with 1."""

    pid = -1
    closed = False

    def poll(self) -> int | None:
        return 1 if self.closed else None

    def wait(self, timeout: float | None = None) -> int:
        return 1


class ScriptedWorker(Worker):
    """A worker without a process: ``respond`` turns each command into the bytes it
    answers with (None: the pipe closes, as when a process dies)."""

    def __init__(self, respond: Callable[[dict[str, Any]], bytes | None]):
        self.respond = respond
        self._answer_read, self._answer_write = os.pipe()
        self.handles, self._theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.process = _NoProcess()
        self.sandboxed, self.memory_limit, self.peak_rss = False, 1 << 40, 0
        self._memory_checked_at = math.inf  # no process to measure
        self.output = OutputTail()
        self._buffer = b""
        self._reader = threading.Thread(target=lambda: None)
        self._reader.start()
        self._writers: list[threading.Thread] = []

    def send(self, message: dict[str, Any]) -> None:
        self.assert_quiet()
        data = self.respond(json.loads(json.dumps(message)))
        if data is None:
            self._close_answers()
            return
        writer = threading.Thread(target=self._write, args=(data,), daemon=True)  # a pipe holds 64 KiB
        writer.start()
        self._writers.append(writer)

    def _write(self, data: bytes) -> None:
        try:
            while data:
                data = data[os.write(self._answer_write, data):]
        except OSError:  # the judge closed its end
            pass

    def _close_answers(self) -> None:
        if self._answer_write is not None:
            os.close(self._answer_write)
            self._answer_write = None

    def pause(self, settle_seconds: float = 1.0) -> None:
        pass

    def resume(self) -> None:
        pass

    def strays(self) -> list[int]:
        return []

    def close(self, grace_seconds: float = 2.0) -> None:
        if self._answer_read is None:
            return
        self.process.closed = True
        os.close(self._answer_read)
        self._answer_read = None
        for writer in self._writers:
            writer.join(timeout=5)
        self._close_answers()
        self.handles.close()
        self._theirs.close()


class Honest:
    """An honest worker's answers, as dicts (``line`` writes one)."""

    def __init__(self, role: str):
        self.role = role
        self.recording = False

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg.get("op")
        if op == "load":
            return {"ok": True, "import_seconds": 0.01, "init_seconds": 0.0, "device_name": "cpu", "versions": {},
                    "settings": {}, "work": {"flops": None, "bytes": None}, "findings": []}
        if op == "resize":
            return {"ok": True, "work": {"flops": None, "bytes": None}}
        if op == "calls":
            self.recorded = None
            return {"ok": True, "need": "order"}
        if op == "record":
            return {"ok": True, "ops": ["relu"], "findings": []}
        if op == "compare":
            return {"ok": True, "comparison": {"ok": True, "check": "values", "detail": "match"}, "tolerance": {}}
        if op == "draw":
            return {"ok": True, "layout": LAYOUT, "fresh": False, "capacity": 8}
        if op == "read":
            return {"ok": True, "inputs_changed": False}
        if "draw" in msg:  # a reference timing itself draws and reads its own calls
            return {"ok": True, "need": "order", "ready": {"layout": LAYOUT, "fresh": False}}
        if "read" in msg:
            return {"ok": True, "need": "order", "read": {"ok": True, "inputs_changed": False}}
        if "go" in msg:
            if msg["go"].get("record"):
                self.recorded = {"ops": ["empty_like", "kbench_test::relu"], "findings": []}
            return {"ok": True, "need": "order", "done": {"clock_ms": 0.001, "host_ms": 0.001, "layout": LAYOUT,
                                                          "fresh": False, "devices": {"output": "cpu"}}}
        if "stop" in msg:
            final = {"ok": True, "clock": "cpu-perf-counter", "overhead_ms": 0.0001, "findings": []}
            if self.recorded is not None:
                final["recorded"] = self.recorded
            return final
        raise AssertionError(f"a command no worker gets: {msg}")


def line(answer: Any) -> bytes:
    return (json.dumps(answer) + "\n").encode()


class Tampered:
    """The candidate's answers, honest except the ``at``-th, which ``tamper`` rewrites:
    given the honest answer (a dict), it returns the bytes to write instead, or None
    to close the pipe."""

    def __init__(self, at: int | None = None, tamper: Callable[[dict[str, Any]], bytes | None] | None = None):
        self.honest = Honest("candidate")
        self.at, self.tamper = at, tamper
        self.count = 0

    def __call__(self, msg: dict[str, Any]) -> bytes | None:
        answer = self.honest.answer(msg)
        index, self.count = self.count, self.count + 1
        if index == self.at and self.tamper is not None:
            return self.tamper(answer)
        return line(answer)


def judge(candidate: Callable[[dict[str, Any]], bytes | None], monkeypatch, tmp_path: Path, *,
          measure_time: bool = True, policy: str = "strict", timeout: float = 60.0) -> kbench.Verdict:
    reference, eager_answers = Honest("reference"), Honest("reference")

    @contextmanager
    def workers(*args: Any):
        ref, cand = ScriptedWorker(lambda msg: line(reference.answer(msg))), ScriptedWorker(candidate)
        eager = ScriptedWorker(lambda msg: line(eager_answers.answer(msg)))  # a consumer, as the candidate is
        try:
            yield ref, cand, tmp_path, eager
        finally:
            for worker in (cand, ref, eager):
                worker.close()

    class NoSpares:
        def pause(self) -> None:
            pass

        def resume(self) -> None:
            pass

    monkeypatch.setattr(evaluation, "evaluation_workers", workers)
    return kbench.evaluate(RELU, TWIN, "cpu", size="small", trials=2, timeout=timeout, measure_time=measure_time,
                           timing=TIMING, policy=policy, sandbox=False, baseline_cache=False, spares=NoSpares())


def honest_answers(monkeypatch, tmp_path) -> int:
    """How many answers the honest candidate writes in a whole evaluation."""
    script = Tampered()
    verdict = judge(script, monkeypatch, tmp_path)
    assert verdict.status == "correct", verdict.reason
    return script.count


def test_the_scripted_honest_worker_is_judged_correct(monkeypatch, tmp_path):
    """The harness itself: untampered answers pass, so every verdict below is the tampering's."""
    assert honest_answers(monkeypatch, tmp_path) > 20


def _field(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], bytes]:
    def tamper(answer: dict[str, Any]) -> bytes:
        node = answer
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return line(answer)

    return tamper


def _when(key: str, tamper: Callable[[dict[str, Any]], bytes | None]) -> Callable[[dict[str, Any]], bytes | None]:
    """The first answer carrying ``key`` tampered with."""
    seen = []

    def script(msg: dict[str, Any], honest=Honest("candidate")) -> bytes | None:
        answer = honest.answer(msg)
        if key in answer and not seen:
            seen.append(answer)
            return tamper(answer)
        return line(answer)

    return script


NESTED_BOMB = b'{"ok": true, "x": ' + b"[" * 400_000 + b"]" * 400_000 + b"}\n"
NAMED = [
    ("nan-clock", "done", _field(("done", "clock_ms"), math.nan), "rejected", "forged-report: "),
    ("infinite-clock", "done", _field(("done", "clock_ms"), math.inf), "rejected", "forged-report: "),
    ("negative-host-clock", "done", _field(("done", "host_ms"), -1.0), "rejected", "forged-report: "),
    ("huge-integer-clock", "done", lambda a: line(a).replace(b'"clock_ms": 0.001', b'"clock_ms": ' + b"9" * 400),
     "rejected", "forged-report: "),
    ("clock-as-text", "done", _field(("done", "clock_ms"), "0.001"), "crashed", "malformed call report"),
    ("lazy-output", "done", _field(("done", "output"), "output is a Lazy, not a torch.Tensor"),
     "rejected", "output-subclass: "),
    ("nested-bomb", "done", lambda a: NESTED_BOMB, "crashed", "unreadable answer"),
    ("deep-but-parseable", "done", lambda a: line({**a, "x": json.loads("[" * 40 + "]" * 40)}), "crashed", "nested"),
    ("oversized", "done", lambda a: b'{"ok": true, "x": "' + b"a" * (MAX_ANSWER_BYTES + 10), "crashed", "oversized"),
    ("not-utf8", "done", lambda a: b'\xff\xfe{"ok": true}\n', "crashed", "unreadable answer"),
    ("layout-as-list", "done", _field(("done", "layout"), ["out"]), "crashed", "malformed call report"),
    ("devices-as-list", "done", _field(("done", "devices"), ["cpu"]), "crashed", "malformed call report"),
    ("read-of-its-own", "done", lambda a: line({"ok": True, "need": "order", "read": {"inputs_changed": False}}),
     "crashed", "where the judge waited"),
    ("pipe-closed", "done", lambda a: None, "crashed", "exited"),
    ("two-answers", "done", lambda a: line(a) + line(a), "rejected", "results-channel: "),
    ("findings-not-a-list", "findings", _field(("findings",), {"rule": "x"}), "crashed", "malformed findings"),
    ("finding-without-message", "findings", _field(("findings",), [{"rule": "threads"}]), "crashed",
     "malformed findings"),
    ("recorded-call-missing", "recorded", lambda a: line({k: v for k, v in a.items() if k != "recorded"}), "crashed",
     "recorded call"),
    ("recorded-ops-not-text", "recorded", _field(("recorded", "ops"), [1, 2]), "crashed", "recorded call"),
    ("import-seconds-as-text", "import_seconds", _field(("import_seconds",), "fast"), "correct", ""),
    ("failure-phase-as-list", "import_seconds", lambda a: line({"ok": False, "phase": ["build"], "error": {"x": 1}}),
     "runtime_error", ""),
    ("overhead-nan", "overhead_ms", _field(("overhead_ms",), math.nan), "correct", ""),
]


@pytest.mark.parametrize("key, tamper, status, reason", [case[1:] for case in NAMED], ids=[case[0] for case in NAMED])
def test_each_forged_or_broken_answer_gets_its_verdict(key, tamper, status, reason, monkeypatch, tmp_path):
    verdict = judge(_when(key, tamper), monkeypatch, tmp_path)
    assert verdict.status == status, verdict.reason
    assert reason in verdict.reason
    assert verdict.correct is (status == "correct")


def test_a_lazy_output_is_let_be_under_the_policy_off(monkeypatch, tmp_path):
    script = _when("done", _field(("done", "output"), "output is a Lazy, not a torch.Tensor"))
    assert judge(script, monkeypatch, tmp_path, policy="off").status == "correct"


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0, -1, 1, 2**63, -(2**70), 10**400])
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e-300, -1.5, 1e308, math.nan, math.inf, -math.inf])
    if kind == 4:
        return rng.choice(["", "ok", "need", "order", "done", "\x00", "é" * 3, "x" * 1000])
    if kind == 5:
        return rng.choice(["clock_ms", "host_ms", "output", "fresh", "devices", "layout", "findings", "ops"])
    if kind == 6:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["ok", "need", "ready", "done", "read", "findings", "recorded", "phase", "error", "clock_ms",
            "host_ms", "output", "fresh", "capacity", "devices", "layout", "ops", "rule", "message", "overhead_ms"]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def random_tamper(rng: random.Random) -> Callable[[dict[str, Any]], bytes | None]:
    """One way of spoiling an answer, drawn at random."""

    def replace_value(answer: dict[str, Any]) -> bytes:
        node = answer
        while True:
            key = rng.choice(list(node))
            if isinstance(node[key], dict) and node[key] and rng.random() < 0.6:
                node = node[key]
                continue
            node[key] = random_json(rng)
            return line(answer)

    def drop_key(answer: dict[str, Any]) -> bytes:
        node = answer
        while isinstance(node.get(key := rng.choice(list(node))), dict) and node[key] and rng.random() < 0.6:
            node = node[key]
        del node[key]
        return line(answer)

    choices = [
        replace_value,
        drop_key,
        lambda answer: line(random_json(rng)),
        lambda answer: line(answer) + line({"ok": rng.random() < 0.5, "need": random_json(rng, 3)}),
        lambda answer: line(answer)[: rng.randrange(1, len(line(answer)))] + b"\n",
        lambda answer: bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + b"\n",
        lambda answer: None,
    ]
    return rng.choice(choices)


@pytest.mark.parametrize("seed", range(40))
def test_any_spoiled_answer_ends_in_a_verdict(seed, monkeypatch, tmp_path):
    """Never an exception out of evaluate, whichever answer is spoiled and however."""
    rng = random.Random(seed)
    measure_time = seed % 4 != 0
    script = Tampered(rng.randrange(20 if measure_time else 5), random_tamper(rng))  # honest: 5 answers, 20-odd timed
    verdict = judge(script, monkeypatch, tmp_path, measure_time=measure_time, timeout=20.0)
    assert verdict.status in STATUSES, verdict
    if verdict.status == "correct":  # a spoiling the protocol can take (a value it ignores), or none made
        assert verdict.trials and all(t.ok for t in verdict.trials)
