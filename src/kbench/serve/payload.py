"""What a request may ask for, checked before anything is stored.

Untrusted bytes from the network become ``NewJob``s here or a ``PayloadError`` with the HTTP status
and one clear sentence; nothing is stored or queued for a request that fails any check, and a batch
is accepted whole or not at all. The checks: the body's size (413), UTF-8 JSON (400), its shape and
field types (422), a source that is text (no NUL or control bytes, no unpaired surrogates) within the
size limit, a problem that is a suite id (or, where the service allows it, a problem file's text
that kbench.suite reads as a problem), a known reward shape and a baseline column the service times.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from kbench.rewards import DEFAULT_BASELINE, shape_named
from kbench.serve.jobs import NewJob
from kbench.suite.problem import ProblemError, load_problem

JOB_FIELDS = ("problem", "problem_source", "source", "shape", "baseline")
DEFAULT_SHAPE = "correct"
# Control characters no source file holds (tab, newlines, form feed and vertical tab are text).
BINARY = re.compile(r"[\x00-\x08\x0e-\x1f]")
INLINE_PREFIX = "inline/"


class PayloadError(Exception):
    """A request refused: ``status`` (400, 403, 413, 422) and why, in one sentence."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Limits:
    """What one request may hold. ``allow_problem_source``: whether a problem may come as a file's text
    (off by default: a problem's reference runs on the judge's trusted side, outside the sandbox)."""

    max_source_bytes: int = 256 * 1024
    max_batch: int = 64
    allow_problem_source: bool = False

    @property
    def max_body_bytes(self) -> int:
        """A full batch of the largest sources and problem texts, JSON-escaped (a quote or a newline takes 2
        bytes), with room for the field names."""
        return self.max_batch * (4 * self.max_source_bytes + 4096) + 65536


def parse_jobs(raw: bytes, limits: Limits, problems: Collection[str], baselines: Collection[str]
               ) -> tuple[list[NewJob], bool]:
    """The jobs a request body asks for and whether it was a batch (``{"jobs": [...]}``) rather than
    one job; PayloadError for anything else. ``problems``: the suite ids accepted; ``baselines``:
    the columns the service times (empty: it times none, so only shapes that need no speed are given)."""
    if len(raw) > limits.max_body_bytes:
        raise PayloadError(413, f"the request body is {len(raw)} bytes, more than the {limits.max_body_bytes} "
                                "this service takes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(400, f"the request body is not UTF-8 text (byte {exc.start}); send JSON") from None
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PayloadError(400, f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise PayloadError(400, "malformed JSON: nested too deeply") from None
    if not isinstance(body, dict):
        raise PayloadError(422, f"the body must be a JSON object (one job, or {{\"jobs\": [...]}}), not {_kind(body)}")
    if "jobs" in body:
        if set(body) != {"jobs"}:
            raise PayloadError(422, f"a batch holds only \"jobs\"; also given: {', '.join(sorted(set(body) - {'jobs'}))}")
        items = body["jobs"]
        if not isinstance(items, list) or not items:
            raise PayloadError(422, "\"jobs\" must be a non-empty list of job objects")
        if len(items) > limits.max_batch:
            raise PayloadError(413, f"a batch of {len(items)} jobs; this service takes at most {limits.max_batch} "
                                    "in one request")
        return [_job(item, f"jobs[{i}]", limits, problems, baselines) for i, item in enumerate(items)], True
    return [_job(body, "the job", limits, problems, baselines)], False


def _job(item: Any, where: str, limits: Limits, problems: Collection[str], baselines: Collection[str]) -> NewJob:
    if not isinstance(item, dict):
        raise PayloadError(422, f"{where} must be a JSON object, not {_kind(item)}")
    unknown = sorted(set(item) - set(JOB_FIELDS))
    if unknown:
        raise PayloadError(422, f"{where}: unknown fields {', '.join(unknown)} (a job takes {', '.join(JOB_FIELDS)})")
    source = _text(item, "source", where, limits, required=True)
    shape_name = _text(item, "shape", where, limits) or DEFAULT_SHAPE
    baseline = _text(item, "baseline", where, limits) or DEFAULT_BASELINE
    try:
        shape = shape_named(shape_name)
    except ValueError as exc:
        raise PayloadError(422, f"{where}: {exc}") from None
    if shape.uses_speed and baseline not in baselines:
        timed = f"it times {', '.join(sorted(baselines))}" if baselines else "it was started without timing"
        raise PayloadError(422, f"{where}: shape {shape.name} needs a speedup over {baseline!r}, and {timed}")
    problem, problem_source = item.get("problem"), item.get("problem_source")
    if (problem is None) == (problem_source is None):
        raise PayloadError(422, f"{where}: give exactly one of \"problem\" (a suite id) and \"problem_source\"")
    if problem is not None:
        if not isinstance(problem, str):
            raise PayloadError(422, f"{where}: \"problem\" must be a string (a suite id), not {_kind(problem)}")
        if problem not in problems:
            shown = problem if len(problem) <= 80 else problem[:77] + "..."
            raise PayloadError(422, f"{where}: unknown problem {shown!r}: give a suite id such as level1/relu "
                                    "(GET /v1/problems lists them)")
    else:
        if not limits.allow_problem_source:
            raise PayloadError(403, f"{where}: this service judges suite problems only (started without "
                                    "--allow-problem-source); give \"problem\"")
        problem_source = _text(item, "problem_source", where, limits, required=True)
        problem = inline_problem_id(problem_source)
        check_problem_source(problem_source, where)
    return NewJob(problem=problem, source=source, shape=shape.name, baseline=baseline,
                  problem_source=problem_source, solution_sha256=hashlib.sha256(source.encode()).hexdigest())


def _text(item: dict, name: str, where: str, limits: Limits, required: bool = False) -> str | None:
    value = item.get(name)
    if value is None:
        if required:
            raise PayloadError(422, f"{where}: \"{name}\" is required")
        return None
    if not isinstance(value, str):
        raise PayloadError(422, f"{where}: \"{name}\" must be a string, not {_kind(value)}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise PayloadError(422, f"{where}: \"{name}\" is not text (it holds an unpaired surrogate)") from None
    if size > limits.max_source_bytes:
        raise PayloadError(413, f"{where}: \"{name}\" is {size} bytes, more than the {limits.max_source_bytes} this "
                                "service takes")
    if match := BINARY.search(value):
        raise PayloadError(422, f"{where}: \"{name}\" is binary, not source text (control byte "
                                f"{ord(match.group()):#04x} at character {match.start()})")
    if required and not value.strip():
        raise PayloadError(422, f"{where}: \"{name}\" is empty")
    return value


def inline_problem_id(problem_source: str) -> str:
    return INLINE_PREFIX + hashlib.sha256(problem_source.encode()).hexdigest()[:16]


def check_problem_source(problem_source: str, where: str) -> None:
    """A problem file's text that kbench.suite reads as a problem (read, never run), else 422."""
    with tempfile.TemporaryDirectory(prefix="kbench-serve-") as folder:
        path = Path(folder) / "problem.py"
        path.write_text(problem_source)
        try:
            load_problem(path, problem_id=inline_problem_id(problem_source))
        except ProblemError as exc:
            raise PayloadError(422, f"{where}: \"problem_source\" is not a usable problem: "
                                    f"{str(exc).replace(str(path), 'problem_source')}") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
