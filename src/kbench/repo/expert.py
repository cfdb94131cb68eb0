"""The expert patch, timed beside the patch judged: a patch's fraction of the expert's speedup.

A patch's score is the share of the expert's speedup it reaches. Both speedups are over the
base revision, so measured apart they each carry the base's noise, and a base that is slow
because of the host (a Python loop, a host sync per row: the host-sync tasks' very point)
moves with the host's speed: on the H200 (2026-12-02) such bases moved by 20-40% from one
second to the next in a plain process, and an expert patch re-measured against its own
cached speedup reached 68% of it. The judge therefore times the expert patch's checkout as
one more column of the same evaluation (kbench.judge.processes.sides: ``Sides.columns``), in a
reference worker of its own, round by round with the candidate and the base on the very
same inputs. The fraction is then the expert's time over the candidate's, measured side by
side (``speedup["expert"]`` in the judge's terms), and the base's noise is not in it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kbench.core.verdict import Verdict

# On a CPU the expert's Triton kernels run through Triton's interpreter (about 0.01x the base in the bundled suite),
# so anything not slower than the base "reaches" the expert's speedup there: no solved, no fraction is claimed.
NOT_MEANINGFUL_ON_CPU = ("not meaningful on a CPU: the expert's Triton kernels run through Triton's interpreter there, "
                         "so its time says nothing of a GPU's; no task is solved or unsolved by a CPU verdict")
# The share of the expert's speedup a patch must reach, on its interval's lower bound, to solve a task (GSO's rule).
SOLVED_FRACTION = 0.95
EXPERT_COLUMN = "expert"  # the expert patch's column in the judge's verdict


def expert_record(verdict: Verdict) -> tuple[Verdict, dict[str, Any]]:
    """The verdict without the expert column, and its ``expert`` field: the patch's fraction of
    the expert's speedup with its interval (from the column), whether that solves the task, and
    the expert's own speedup over the base in this evaluation with each round's time."""
    fraction = verdict.speedup.get(EXPERT_COLUMN)
    interval = verdict.speedup_interval.get(EXPERT_COLUMN)
    column = verdict.baselines.get(EXPERT_COLUMN, {})
    without = {key: {k: v for k, v in getattr(verdict, key).items() if k != EXPERT_COLUMN}
               for key in ("speedup", "speedup_interval", "speedup_interval_within", "baselines")}
    stripped = replace(verdict, **without)
    if fraction is None or not interval:
        return stripped, {}
    base = verdict.speedup.get("base")
    record = {
        "speedup": base / fraction if base else None,
        "fraction": fraction,
        "fraction_interval": list(interval),
        "solved": solves(fraction, interval[0]),
        "runtime_ms": column.get("runtime_ms"),
        "rounds_ms": (column.get("timing") or {}).get("rounds", []),
        "measured": "beside the patch, in this evaluation (rounds interleaved with it and the base)",
    }
    if on_cpu(verdict.device):
        record.update(solved=None, meaningful=False, note=NOT_MEANINGFUL_ON_CPU)
    return stripped, record


def on_cpu(device: str | None) -> bool:
    """Whether a verdict's (or a run's) device is the CPU, where a fraction of the expert means nothing."""
    return (device or "").startswith("cpu")


def solves(fraction: float | None, fraction_low: float | None) -> bool:
    """GSO's rule, on the interval: the fraction's lower bound (the fraction itself where there is no
    interval) reaches ``SOLVED_FRACTION``. For a correct patch; the verdict's and the scores' one rule."""
    low = fraction_low if fraction_low is not None else fraction
    return low is not None and low >= SOLVED_FRACTION


def solved(verdict: Verdict) -> bool | None:
    """A task is solved by a correct patch whose fraction of the expert's speedup ``solves`` it; None for
    a verdict reached on a CPU (``NOT_MEANINGFUL_ON_CPU``: no claim either way)."""
    if on_cpu(verdict.device):
        return None
    expert = verdict.expert
    return verdict.correct and solves(expert.get("fraction"), (expert.get("fraction_interval") or [None])[0])
