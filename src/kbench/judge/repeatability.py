"""What moves between evaluations: the speedup interval a reader can hold to.

One evaluation's bootstrap (``timing.speedup_interval``) describes the noise
of the calls within its pair of processes. A new evaluation starts new
processes, whose buffers land elsewhere, whose libraries pick their kernels
anew, on a GPU whose clocks have moved: its speedup moves by more than that
interval says (on the H200, one evaluation's 95% interval held the other
evaluation's speedup 40% of the time). The verdict's ``speedup_interval`` adds
that between-process spread, a standard deviation of the log speedup
calibrated per device type from pairs of independent evaluations
(docs/timing.md, "A speedup interval that holds the truth"), to each side of
the within-evaluation interval, which the verdict keeps as
``speedup_interval_within``.
"""

from __future__ import annotations

import math

Z95 = 1.959964
# Standard deviation of one evaluation's log speedup from process to process, by device type.
# cuda: from 166 null-candidate evaluations on the H200, 2026-12-01 (the reference as its own
# candidate, true speedup 1; docs/measurements/2026-12-01-h200-null-candidates*.jsonl):
# E[L^2] = s^2 + E[w^2], with L the log speedup and w the within-evaluation standard deviation,
# gives s = 1.03%; rounded up to 1.1%. (The 20 pairs of 2026-11-29 had given 0.57%, which
# held 1.0 in only 85% of these.)
# cpu: not calibrated (CPU timings are noisy and say nothing about GPU kernels): a wide 5%.
BETWEEN_PROCESS_SD = {"cuda": 0.011, "cpu": 0.05}


def between_process_sd(device: str) -> float:
    return BETWEEN_PROCESS_SD["cuda" if device.startswith("cuda") else "cpu"]


def widen(speedup: float, within: list[float], device: str) -> list[float]:
    """The 95% interval of a re-evaluation's truth: each side of the within-evaluation
    interval combined, in log space, with the between-process spread."""
    spread = Z95 * between_process_sd(device)
    low, high = within
    below = math.hypot(math.log(speedup / low), spread) if low > 0 else math.inf
    above = math.hypot(math.log(high / speedup), spread)
    return [speedup * math.exp(-below), speedup * math.exp(above)]
