"""The reward: a verdict turned into a number by a named shape, with everything a trainer
needs to trust it or throw it away.

A zero always carries its reason (the status, the rule or check, the evidence, in one line), so a
trainer can tell a cheat from a compile error from a slow kernel. A failure that is not the
candidate's (the machine, the harness, the problem's own reference: ``INFRA_STATUSES``) is never
a reward: its ``value`` is None, and so is the value of a correct verdict whose shape needs a
speed that was not measured (a judge run without timing, a baseline column not timed). A trainer
drops None; it never reads it as 0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from kbench.core.verdict import Verdict, replace_non_finite
from kbench.core.versions import package_version
from kbench.rewards.shapes import Shape, shape_named
from kbench.runs.records import RETRIED_STATUSES, RUN_STATUSES

# Statuses that say nothing about the candidate: never a reward (value None).
INFRA_STATUSES = frozenset(RETRIED_STATUSES)
REASON_CHARS = 400  # a reason is one line a log or a trainer's table shows whole
DEFAULT_BASELINE = "eager"


@dataclass(frozen=True)
class Reward:
    """One reward. ``value``: a float, or None when there is none to give (``reason`` says why).
    ``reason``: None only for a positive reward. ``interval``: the speedup's 95% interval over
    ``baseline``, where timed. ``basis``: what the speed was read from (``interval_low``, or
    ``median`` for a verdict with no interval), None where the shape reads no speed."""

    value: float | None
    shape: str
    baseline: str | None
    status: str
    reason: str | None
    interval: tuple[float, float] | None = None
    speedup: float | None = None
    basis: str | None = None
    problem: str | None = None
    solution_sha256: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def is_reward(self) -> bool:
        """Whether a trainer may use it (False: an infrastructure failure or a missing measurement)."""
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        """Plain, strict-JSON values (a non-finite float as its string, as Verdict.to_json writes it)."""
        data = asdict(self)
        data["interval"] = None if self.interval is None else list(self.interval)
        return replace_non_finite(data, str)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Reward":
        """The reward ``to_dict`` wrote (unknown keys are refused: a misspelt field is a mistake)."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"not fields of a Reward: {', '.join(unknown)}")
        values = dict(data)
        if values.get("interval") is not None:
            low, high = values["interval"]
            values["interval"] = (float(low), float(high))
        for name in ("value", "speedup"):
            if isinstance(values.get(name), str):
                values[name] = float(values[name])
        return cls(**values)


def reward_of(verdict: Verdict | Mapping[str, Any], shape: str | Shape = "correct",
              baseline: str = DEFAULT_BASELINE) -> Reward:
    """The reward ``shape`` gives ``verdict`` (a Verdict, or its ``to_dict()``/JSON form) over the
    baseline column ``baseline``. ValueError for an unknown shape."""
    chosen = shape if isinstance(shape, Shape) else shape_named(shape)
    get = verdict.get if isinstance(verdict, Mapping) else (lambda name, default=None: getattr(verdict, name, default))
    status, correct = str(get("status")), bool(get("correct"))
    interval = _interval((get("speedup_interval") or {}).get(baseline))
    point = _finite((get("speedup") or {}).get(baseline))
    common = dict(shape=chosen.name, baseline=baseline if chosen.uses_speed else None, status=status,
                  interval=interval, speedup=point, problem=get("problem"),
                  solution_sha256=get("solution_sha256"), provenance=provenance_of(get))
    if status in INFRA_STATUSES:
        return Reward(None, reason=one_line(f"{status} (not a reward): {get('reason')}"), **common)
    if not correct:
        return Reward(0.0, reason=one_line(f"{status}: {get('reason')}"), **common)
    if not chosen.uses_speed:
        return Reward(1.0, reason=None, **common)
    speed, basis = (interval[0], "interval_low") if interval else (point, "median") if point is not None else (None, None)
    if speed is None:
        timed = ", ".join(sorted(k for k, v in (get("speedup") or {}).items() if v is not None)) or "none"
        return Reward(None, reason=one_line(
            f"{status}, but no speedup over {baseline!r} was measured (timed columns: {timed}), which "
            f"shape {chosen.name} needs (not a reward)"), **common)
    value = chosen.value(True, speed)
    reason = None
    if value <= 0:
        reason = one_line(f"{status}, but the speedup over {baseline} is {speed:.4g} at the "
                          f"{'95% interval lower bound' if basis == 'interval_low' else 'median'}"
                          + (f" ({interval[0]:.4g}-{interval[1]:.4g})" if interval else "")
                          + (f", not above {chosen.threshold:g}" if chosen.threshold is not None else ""))
    return Reward(value, reason=reason, basis=basis, **common)


def failure_reward(status: str, reason: str, shape: str | Shape = "correct", baseline: str = DEFAULT_BASELINE,
                   problem: str | None = None, solution_sha256: str | None = None,
                   provenance: Mapping[str, Any] | None = None) -> Reward:
    """The reward of an evaluation that ended without a verdict: ``status`` one of the run statuses
    (kbench.runs.records.RUN_STATUSES; ``infra_error``, ``problem_error``: no reward, value None;
    ``missing``, ``no_code``: the model gave nothing to judge, 0)."""
    if status not in RUN_STATUSES:
        raise ValueError(f"unknown status {status!r}: choose from {', '.join(RUN_STATUSES)}")
    chosen = shape if isinstance(shape, Shape) else shape_named(shape)
    infra = status in INFRA_STATUSES
    return Reward(None if infra else 0.0, chosen.name, baseline if chosen.uses_speed else None, status,
                  one_line(f"{status}{' (not a reward)' if infra else ''}: {reason}"), problem=problem,
                  solution_sha256=solution_sha256, provenance=dict(provenance or {"kbench": kbench_version()}))


def provenance_of(get: Any) -> dict[str, Any]:
    """What the reward rests on: the kbench that judged, the judge's settings, the device, the seeds and
    the sandbox, as the verdict recorded them."""
    timing = get("timing") or {}
    return {
        "kbench": kbench_version(),
        "versions": dict(get("versions") or {}),
        "judge": {
            "policy": get("policy"), "correctness": get("correctness"), "size": get("size"), "dtype": get("dtype"),
            "trials_run": len(get("trials") or []), "settings": dict(get("settings") or {}),
            "timing": {k: v for k, v in timing.items() if not isinstance(v, (list, dict))} if isinstance(timing, dict) else {},
        },
        "device": {"device": get("device"), "name": get("device_name")},
        "seeds": dict(get("seeds") or {}),
        "sandbox": dict(get("sandbox") or {}),
        "flags": list(get("flags") or []),
        "problem_sha256": get("problem_sha256"),
    }


def kbench_version() -> str:
    return package_version("kbench") or "unknown"


def one_line(text: str) -> str:
    """``text`` as one line of at most ``REASON_CHARS`` characters (a traceback keeps its last line, the error)."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith(("infra_error", "problem_error")) and "Traceback" in text:
        line = f"{lines[0]} ... {lines[-1]}"
    else:
        line = " ".join(lines)
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 3] + "..."


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _interval(pair: Any) -> tuple[float, float] | None:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        return None
    low, high = _finite(pair[0]), _finite(pair[1])
    return None if low is None or high is None else (low, high)
