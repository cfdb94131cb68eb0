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
# cuda: from the 20 pairs of independent evaluations on the H200, 2026-11-29
# (docs/measurements/2026-11-29-h200-repeatability.jsonl: E[(L1 - L2)^2] = 2 s^2 + w1^2 + w2^2
# with w the within-evaluation standard deviations gives s = 0.57%; rounded up to 0.6%).
# cpu: not calibrated (CPU timings are noisy and say nothing about GPU kernels): a wide 5%.
BETWEEN_PROCESS_SD = {"cuda": 0.006, "cpu": 0.05}


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
