"""What the judge takes from a candidate's answers, each field checked before use.

Everything a candidate's worker says comes from a process the candidate
controls. ``process.Worker.receive`` bounds each answer's size and nesting;
``calls.CallDriver`` checks each call's report; here are the fields of the
other answers the evaluation reads. A field the protocol does not allow is
``WorkerLost("protocol")`` (the verdict ``crashed``); nothing the candidate
writes reaches the judge's code as a type it did not expect.
"""

from __future__ import annotations

from typing import Any

from kbench.judge.trusted.calls import is_reading
from kbench.judge.guard import Finding
from kbench.judge.processes.process import WorkerLost


def reported_findings(answer: Any) -> list[Finding]:
    """The runtime guard's findings an answer carries (each a rule and a message)."""
    reported = answer.get("findings", []) if isinstance(answer, dict) else None
    if not isinstance(reported, list) or not all(
            isinstance(f, dict) and isinstance(f.get("rule"), str) and isinstance(f.get("message"), str)
            for f in reported):
        raise WorkerLost("protocol", "malformed findings in the candidate's answer")
    return [Finding(f["rule"], f["message"]) for f in reported]


def recorded_call(recorded: Any) -> tuple[list[str], list[Finding]]:
    """The operations and findings of the recorded call, as its series' answer reported them."""
    ops = recorded.get("ops") if isinstance(recorded, dict) else None
    if not (isinstance(ops, list) and all(isinstance(op, str) for op in ops)):
        raise WorkerLost("protocol", "the recorded call's report is missing or malformed")
    return ops, reported_findings(recorded)


def failure_phase(answer: dict[str, Any]) -> str | None:
    """The phase a failed answer names (kbench.judge.exchange.failure), if it names one."""
    phase = answer.get("phase")
    return phase if isinstance(phase, str) else None


def seconds(value: Any) -> float:
    """A duration the worker reported for the record only (its import time): 0 unless a real one."""
    return float(value) if is_reading(value) else 0.0
