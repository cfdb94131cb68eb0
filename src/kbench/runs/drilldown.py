"""One sample's drill-down in the HTML report: all the store holds about it, to debug with.

The report's tables give one line per sample; a click on one opens its
drill-down (``drilldown.html.j2``): the whole reason, the verdict's numbers,
each trial and its error, the timing distributions of the candidate and of each
baseline column, the output tail, the solution's source, the verdicts a
re-judging replaced, and for a model run the whole conversation. Built from
``views.SampleDetail`` as ``kbench show RUN PROBLEM --full`` is, from the stored
verdict as a dict (a store written by another kbench version still shows).

Verdicts keep each timing's summary (quartiles, extremes, each round's median),
not its raw calls: the distribution drawn is that summary, on a log axis.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from typing import Any

from kbench.runs.log_axis import axis
from kbench.runs.records import ProblemRecord, RunData, finite
from kbench.runs.views import SampleDetail, problem_details

QUANTILES = ("min_ms", "p25_ms", "median_ms", "p75_ms", "max_ms")
# The timing plot's geometry, in pixels.
WIDTH, LEFT, RIGHT, TOP, ROW, AXIS_HEIGHT = 640, 110, 24, 8, 28, 40


@dataclass(frozen=True)
class TimingSeries:
    """One measured distribution of per-call times: the candidate's, or a baseline column's."""

    label: str  # "candidate", or the column
    clock: str
    min_ms: float
    p25_ms: float
    median_ms: float
    p75_ms: float
    max_ms: float
    mean_ms: float | None
    stdev_ms: float | None
    count: int | None
    rel_error: float | None
    stop_reason: str
    source: str  # "measured", or "cache" for a column taken from the baseline cache
    rounds: tuple[float, ...]  # each round's median (candidate and baselines alternate: docs/timing.md)


@dataclass(frozen=True)
class Drilldown:
    """What one sample's drill-down shows; ``anchor`` is the page's link to it."""

    anchor: str
    run: str
    problem: ProblemRecord
    detail: SampleDetail
    verdict: dict[str, Any]  # the stored verdict ({} where there is none: missing, pending, no_code...)
    columns: tuple[str, ...]
    timing: list[TimingSeries]
    timing_svg: str
    verdict_json: str


def anchor(run_number: int, row: int) -> str:
    """The id of a drill-down in the page: the run's place in the report and the sample's row in its table."""
    return f"sample-{run_number}-{row}"


def drilldowns(data: RunData, run_number: int, columns: tuple[str, ...]) -> list[Drilldown]:
    """Every sample's drill-down, in the order of the run's table (``views.sample_rows``)."""
    result = []
    for problem in problem_details(data):
        for detail in problem.samples:
            verdict = dict((detail.evaluation.verdict if detail.evaluation else None) or {})
            series = timing_series(verdict)
            result.append(Drilldown(
                anchor=anchor(run_number, len(result)), run=data.run.name, problem=problem.problem, detail=detail,
                verdict=verdict, columns=columns, timing=series, timing_svg=timing_svg(series),
                verdict_json=json.dumps(finite(verdict), indent=2, default=str) if verdict else "",
            ))
    return result


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _series(label: str, timing: Any, source: str) -> TimingSeries | None:
    if not isinstance(timing, dict):
        return None
    quantiles = [_number(timing.get(key)) for key in QUANTILES]
    if any(q is None or q <= 0 for q in quantiles):
        return None  # not a time (an old or partial record): nothing to draw
    count = timing.get("count")
    rounds = tuple(r for r in (_number(x) for x in timing.get("rounds") or []) if r is not None and r > 0)
    return TimingSeries(label, str(timing.get("clock", "")), *quantiles, _number(timing.get("mean_ms")),
                        _number(timing.get("stdev_ms")), count if isinstance(count, int) else None,
                        _number(timing.get("rel_error")), str(timing.get("stop_reason", "")), source, rounds)


def timing_series(verdict: dict[str, Any]) -> list[TimingSeries]:
    """The candidate's timing, then each baseline column's, where the verdict holds one."""
    found = [_series("candidate", verdict.get("timing"), "measured")]
    for column, baseline in (verdict.get("baselines") or {}).items():
        if isinstance(baseline, dict):
            found.append(_series(str(column), baseline.get("timing"), str(baseline.get("source", "measured"))))
    return [s for s in found if s is not None]


def timing_svg(series: list[TimingSeries]) -> str:
    """The distributions as horizontal boxes on one log axis labelled at 1-2-5 values: whiskers from
    the fastest to the slowest call, the box between the quartiles, a bar at the median and a dot at
    each round's median. Markup with every text escaped; empty without a series."""
    if not series:
        return ""
    ticks, labels = axis([v for s in series for v in (s.min_ms, s.max_ms, *s.rounds)])
    low, high = math.log10(ticks[0]), math.log10(ticks[-1])
    span = WIDTH - LEFT - RIGHT

    def x(value: float) -> str:
        return f"{LEFT + (math.log10(value) - low) / (high - low) * span:.1f}"

    bottom = TOP + ROW * len(series)
    parts = [f'<svg class="timing" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{bottom + AXIS_HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {bottom + AXIS_HEIGHT}" role="img" aria-label="per-call times, log scale">']
    for tick, text in zip(ticks, labels):
        parts.append(f'<line class="grid" x1="{x(tick)}" x2="{x(tick)}" y1="{TOP}" y2="{bottom}"/>'
                     f'<text class="tick" x="{x(tick)}" y="{bottom + 14}" text-anchor="middle">{text}</text>')
    parts.append(f'<text class="axis-title" x="{LEFT + span / 2:.1f}" y="{bottom + 32}" text-anchor="middle">'
                 'ms per call (log scale)</text>')
    for i, s in enumerate(series):
        middle = TOP + ROW * i + ROW / 2
        title = html.escape(f"{s.label}: median {s.median_ms:.4g} ms, quartiles {s.p25_ms:.4g}-{s.p75_ms:.4g} ms, "
                            f"calls from {s.min_ms:.4g} to {s.max_ms:.4g} ms")
        parts.append(
            f'<g class="series"><title>{title}</title>'
            f'<text class="label" x="{LEFT - 8}" y="{middle + 4:.1f}" text-anchor="end">{html.escape(s.label)}</text>'
            f'<line class="whisker" x1="{x(s.min_ms)}" x2="{x(s.max_ms)}" y1="{middle}" y2="{middle}"/>'
            f'<rect class="box" x="{x(s.p25_ms)}" y="{middle - 7}" '
            f'width="{max(float(x(s.p75_ms)) - float(x(s.p25_ms)), 1):.1f}" height="14"/>'
            f'<line class="median" x1="{x(s.median_ms)}" x2="{x(s.median_ms)}" y1="{middle - 9}" y2="{middle + 9}"/>'
            + "".join(f'<circle class="round" cx="{x(r)}" cy="{middle}" r="2.5"/>' for r in s.rounds)
            + "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)
