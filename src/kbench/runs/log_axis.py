"""Ticks of a logarithmic axis at 1, 2 and 5 times a power of ten, for the report's plots.

Plotly's default labels of a log axis are the digits 2 to 9 between the powers of
ten (``0.1 9 8 7 ... 2 1``), so a box at 0.17 sits beside a "2"; a reader of a
speedup or a time wants round values instead: ``0.1 0.2 0.5 1 2 5 10``.
"""

from __future__ import annotations

import math

STEPS = (1, 2, 5)
MAX_DECADES_WITH_STEPS = 4  # wider, one tick per power of ten: 1-2-5 over more decades crowds the axis
MARGIN = 1.15  # the axis reaches this factor beyond the data before its end tick


def log_ticks(low: float, high: float) -> list[float]:
    """The 1-2-5 values from the one at or below ``low`` to the one at or above ``high``
    (powers of ten only when they span more than MAX_DECADES_WITH_STEPS decades)."""
    if not (0 < low <= high and math.isfinite(high)):
        raise ValueError(f"a log axis needs 0 < low <= high, not {low}, {high}")
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = STEPS if last - first <= MAX_DECADES_WITH_STEPS else (1,)
    values = [float(f"{step}e{exponent}") for exponent in range(first, last + 1) for step in steps]
    below = max(v for v in values if v <= low)
    above = min(v for v in values if v >= high)
    return [v for v in values if below <= v <= above]


def axis(values: list[float], include: tuple[float, ...] = ()) -> tuple[list[float], list[str]]:
    """Ticks and labels of a log axis over the positive finite ``values`` (and ``include``),
    with a MARGIN of room at both ends; ``0.1 ... 10`` when there is nothing to show."""
    shown = [v for v in (*values, *include) if v is not None and math.isfinite(v) and v > 0]
    if not shown:
        shown = [0.1, 10.0]
    ticks = log_ticks(min(shown) / MARGIN, max(shown) * MARGIN)
    return ticks, [label(v) for v in ticks]


def label(value: float) -> str:
    """``0.2``, ``5``, ``1e+03``: the shortest form of a tick's value."""
    return f"{value:g}"
