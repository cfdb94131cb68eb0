"""Rules the judge applies to what the workers reported, in its own process:
the operations the candidate's forward ran (the reference's own, PyTorch's
instead of kernels), the two clocks of one call, the speed of light. (The
judge's own clock against the candidate's is
kbench.judge.trusted.calls.trusted_clock_findings.)"""

from __future__ import annotations

from typing import Any

from kbench.core.hardware import speed_of_light_ms
from kbench.judge.guard import Finding
from kbench.judge.guard.ops import torch_compute_findings
from kbench.judge.guard.runtime import compute_ops

# The host clock may exceed the events by launch and synchronisation latency,
# never by whole kernels: more than this means work the events did not see.
# On the H200 that latency was 0.019-0.135 ms per call (median 0.039, 599
# measured timings in docs/measurements); at 0.05 ms an honest 0.04 ms kernel
# was rejected once (2026-12-01). The judge's own clock (trusted-clock) keeps
# a wider 0.3 ms.
TIMER_RATIO = 1.25
TIMER_SLACK_MS = 0.15


def reference_op_findings(reference_ops: list[str], candidate_ops: list[str]) -> list[Finding]:
    """The rules on the operations each side's forward ran in its recorded call:
    ``reference-op`` (every computing operation of the reference), then
    ``torch-compute`` (PyTorch computing instead of the solution's kernels)."""
    findings = []
    needed = compute_ops(reference_ops)
    if needed and needed <= compute_ops(candidate_ops):
        findings.append(Finding("reference-op", f"forward runs the reference's own operations {sorted(needed)}"))
    return findings + torch_compute_findings(reference_ops, candidate_ops)


def timer_findings(rounds: list[dict[str, Any]]) -> list[Finding]:
    """Events time one stream; the host clock around a device-wide sync sees them all.
    Per timing round (``rounds``: each round's timing summary), suspect only when
    every round's host clock passes its events: hidden work is in every call, a
    loaded machine's late wake-ups from the sync in some rounds."""
    excess = [(r["host_median_ms"] - TIMER_RATIO * r["median_ms"] - TIMER_SLACK_MS, r) for r in rounds
              if r["clock"] == "cuda-events"]
    if not excess or min(e for e, _ in excess) <= 0:
        return []
    closest = min(excess, key=lambda e: e[0])[1]
    return [Finding("timer-mismatch", f"in every one of {len(excess)} round(s) the host clock saw more than the CUDA "
                    f"events allow; at the closest, {closest['host_median_ms']:.4g} ms per call where the events saw "
                    f"{closest['median_ms']:.4g} ms")]


def speed_of_light_findings(candidate_ms: float, loaded: dict[str, Any], dtype: str) -> tuple[float | None, list[Finding]]:
    """The speed-of-light time of the problem's work in ``dtype`` on the
    reference's GPU, and a finding when the candidate's time beats it."""
    work = loaded.get("work", {})
    limit = speed_of_light_ms(loaded.get("device_name"), work.get("flops"), work.get("bytes"), dtype)
    if limit is None or candidate_ms >= limit:
        return limit, []
    return limit, [Finding(
        "speed-of-light",
        f"{candidate_ms:.4g} ms is faster than the {limit:.4g} ms this GPU needs for the problem's "
        f"{work.get('flops') or 0:.3g} FLOP and {work.get('bytes') or 0:.3g} bytes",
    )]
