"""The verdict: the typed record of one evaluation, as stored and printed."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

# Every status the judge can give, and what it means.
STATUSES = {
    "correct": "every trial matched the reference within tolerance",
    "incorrect": "an output differs from the reference (the reason names the check)",
    "compile_error": "the solution could not be turned into a ModelNew on the device: "
    "not Python, an import or build failure, no ModelNew, or its constructor raised",
    "runtime_error": "forward raised an exception (including CUDA errors)",
    "timeout": "the evaluation did not finish within its time limit",
    "crashed": "the candidate's process died (signal, exit, memory limit) or broke the protocol",
    "rejected": "a rule of the guard rejected the solution",
}


@dataclass
class Trial:
    """One correctness trial: a fresh seed, one call, one comparison."""

    index: int
    ok: bool
    check: str
    detail: str
    max_abs_error: float | None = None  # against the reference's output
    max_rel_error: float | None = None
    # How its floating-point values were judged ("truth": against the float64 truth; "kernelbench": against
    # the reference's output), whether the "kernelbench" criterion accepts them, and the errors against the
    # truth (kbench.judge.trusted.compare: candidate_error, reference_error, ..., or "unavailable": why).
    criterion: str = "kernelbench"
    kernelbench_ok: bool | None = None
    truth: dict[str, Any] | None = None


@dataclass
class Verdict:
    problem: str
    problem_path: str
    problem_sha256: str
    solution_path: str | None
    solution_sha256: str
    device: str
    size: str
    status: str
    correct: bool
    reason: str
    runtime_ms: float | None = None
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    speedup: dict[str, float | None] = field(default_factory=dict)
    # 95%, per column: where a re-evaluation's speedup lies (between-process spread included), and
    # the precision of this evaluation's own calls alone (docs/timing.md)
    speedup_interval: dict[str, list[float]] = field(default_factory=dict)
    speedup_interval_within: dict[str, list[float]] = field(default_factory=dict)
    timing: dict[str, Any] | None = None
    device_name: str | None = None
    trials: list[Trial] = field(default_factory=list)
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    tolerance: dict[str, dict[str, float]] = field(default_factory=dict)
    seeds: dict[str, Any] = field(default_factory=dict)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    wall_seconds: float = 0.0
    output_tail: str = ""
    output_bytes: int = 0
    versions: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    policy: str = "lenient"  # kbench.judge.guard.DEFAULT_POLICY (the core does not import the judge)
    flags: list[str] = field(default_factory=list)
    speed_of_light_ms: float | None = None
    dtype: str = "float32"
    # The candidate's confinement (kbench.judge.processes.sandbox): {"kind": "bubblewrap", ...}, or kind "none".
    sandbox: dict[str, Any] = field(default_factory=dict)
    # How outputs reached the reference: ["device"] (GPU memory shared by descriptor, kbench.judge.exchange.buffers) or ["shared memory"].
    handover: list[str] = field(default_factory=list)
    # Rejections that noise could have made, each measured again before the verdict
    # (kbench.judge.confirmation): the reasons seen first, whatever the second evaluation said.
    suspicions: list[str] = field(default_factory=list)
    # "kernel" (a solution to a problem) or "repo" (a patch to a repository-maintenance task:
    # kbench.repo); for "repo", ``problem`` is the task id and the speedup column is "base".
    track: str = "kernel"
    # The repository track's comparison with the task's expert patch:
    # {"speedup": x, "fraction": f, "fraction_interval": [lo, hi], "measured": "..."}; empty otherwise.
    expert: dict[str, Any] = field(default_factory=dict)
    # The correctness criterion asked for (kbench.judge.trusted.compare.CRITERIA; older records: "kernelbench"), whether
    # KernelBench's (the problem's tolerance against the reference's output) accepts every checked call (the
    # "KernelBench-compatible" column; None where not recorded), and the worst errors against the float64 truth
    # over the checked calls, with the reasons where no truth was computed.
    correctness: str = "kernelbench"
    kernelbench_correct: bool | None = None
    truth: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        # Every text a candidate can reach (an exception's message, its output) made encodable, so
        # that no store, JSON writer or terminal the verdict goes to raises on it (issue 57).
        for name, value in vars(self).items():
            if not isinstance(value, (int, float, bool)) and value is not None:
                object.__setattr__(self, name, encodable(value))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, **kwargs: Any) -> str:
        """Strict JSON, always: an infinite or NaN float (a relative error where the
        expected value is 0) is written as the string ``"inf"``, ``"-inf"`` or
        ``"nan"``, which ``float()`` reads back."""
        return json.dumps(replace_non_finite(self.to_dict(), str), allow_nan=False, default=str, **kwargs)


def encodable(obj: Any) -> Any:
    """``obj`` (strings, and dicts, lists, tuples and Trials of them) with every string made
    encodable as UTF-8: a lone surrogate (``'\\udc80'``, what ``surrogateescape`` makes of a byte
    that is no UTF-8, or what an escaped JSON string can hold) written as its escape
    (``\\udc80``), which SQLite, ``json`` with ``ensure_ascii=False`` and a UTF-8 terminal
    all take. Returns ``obj`` itself where nothing needed it (the common case costs one check)."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return obj.encode("utf-8", "backslashreplace").decode("utf-8")
        return obj
    if isinstance(obj, dict):
        items = [(encodable(key), encodable(value)) for key, value in obj.items()]
        same = all(k is key and v is value for (k, v), (key, value) in zip(items, obj.items()))
        return obj if same else dict(items)
    if isinstance(obj, (list, tuple)):
        values = [encodable(value) for value in obj]
        return obj if all(v is value for v, value in zip(values, obj)) else type(obj)(values)
    if isinstance(obj, Trial) and (encodable(obj.check) is not obj.check or encodable(obj.detail) is not obj.detail):
        return Trial(obj.index, obj.ok, encodable(obj.check), encodable(obj.detail), obj.max_abs_error,
                     obj.max_rel_error)
    return obj


def replace_non_finite(obj: Any, replacement: Callable[[float], Any]) -> Any:
    """``obj`` (dicts, lists and tuples of plain values) with every NaN or infinite
    float replaced by ``replacement(value)``, for strict JSON writers."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return replacement(obj)
    if isinstance(obj, dict):
        return {key: replace_non_finite(value, replacement) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [replace_non_finite(value, replacement) for value in obj]
    return obj
