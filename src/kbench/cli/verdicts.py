"""Human-readable renderings of verdicts for the terminal."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from kbench.core.verdict import Verdict
from kbench.judge.protocol.pairs import pairs_taken
from kbench.runs.score import CPU_NOTE, cpu_note

STATUS_STYLE = {"correct": "bold green", "incorrect": "bold red", "rejected": "bold magenta"}
OUTPUT_LINES_SHOWN = 15
REASON_LINE_CHARS = 200
# On a CPU, Triton kernels run through Triton's interpreter (TRITON_INTERPRET=1): the
# same ReLU measured 0.0047x to 0.18x there. Every CPU timing shown says so (CPU_NOTE, kbench.runs.score).
CPU_SHORT = "CPU timing"


def verdict_json(verdict: Verdict) -> str:
    """``eval --json`` (and ``eval-patch --json``): the verdict's own JSON, with ``cpu_note`` first:
    CPU_NOTE for a verdict judged on a CPU, whose times and speedups mean nothing, else null."""
    return json.dumps({"cpu_note": cpu_note(verdict.device), **json.loads(verdict.to_json())})


def one_line(reason: str) -> str:
    """The first line of a reason (a traceback follows it on the next lines), cut to fit a progress line."""
    line = reason.strip().splitlines()[0] if reason.strip() else ""
    return line if len(line) <= REASON_LINE_CHARS else line[: REASON_LINE_CHARS - 3] + "..."


def spread_text(rel_error: float | None) -> str:
    """The median's relative uncertainty, as a percentage where it means something:
    a 95% interval wider than the median itself says only that the median is unstable."""
    if rel_error is None:
        return ""
    if rel_error >= 1:
        return ", median unstable (its 95% interval is wider than itself)"
    return f", median +-{100 * rel_error:.2f}%" if rel_error < 0.1 else f", median +-{100 * rel_error:.0f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g} ms"


def _timing_line(timing: dict | None) -> str:
    if not timing:
        return "-"
    rel_text = spread_text(timing.get("rel_error"))
    graph_text = ", CUDA graph replays" if (timing.get("settings") or {}).get("cuda_graph") else ""
    return (
        f"median {timing['median_ms']:.6g} ms (IQR {timing['p25_ms']:.6g}-{timing['p75_ms']:.6g}, "
        f"n={timing['count']}{rel_text}, {timing['clock']}{graph_text})"
    )


def print_verdict(console: Console, verdict: Verdict) -> None:
    style = STATUS_STYLE.get(verdict.status, "bold yellow")
    where = ", ".join(filter(None, [verdict.device_name, f"size {verdict.size}", verdict.dtype]))
    console.print(f"[{style}]{verdict.status}[/{style}]  {verdict.problem} on {verdict.device} ({where})",
                  highlight=False)
    reason = verdict.reason.replace("\n", "\n    ")  # a traceback's lines under the reason's
    console.print(f"  reason: {reason}", highlight=False, markup=False)
    if verdict.sandbox.get("kind") == "none":
        console.print("  [bold yellow]not sandboxed[/bold yellow] (--no-sandbox): the candidate ran with the judge's "
                      "privileges; this verdict is not proof against a candidate that reaches outside its process",
                      highlight=False)
    for flag in verdict.flags:
        console.print(f"  flag ({verdict.policy} policy): {flag}", highlight=False, markup=False)
    for suspicion in verdict.suspicions:
        console.print(f"  measured twice: a first evaluation's {suspicion}", highlight=False, markup=False)
    if verdict.max_abs_error is not None:
        console.print(f"  {_errors_text(verdict)}", highlight=False)
    if verdict.truth:
        console.print(f"  {_truth_text(verdict)}", highlight=False, markup=False)
    if verdict.correct and verdict.timing:
        if verdict.device == "cpu":
            console.print(f"  [yellow]note:[/yellow] {CPU_NOTE}", highlight=False)
        rounds = len(verdict.timing.get("rounds", [])) or 1
        console.print(f"  candidate: {_timing_line(verdict.timing)}, {rounds} round(s)", highlight=False)
        for column, speedups in (verdict.timing.get("pair_speedups") or {}).items():
            console.print(f"  {len(speedups)} worker pairs, their speedups over {column}: "
                          + ", ".join(f"{s:.4g}x" for s in speedups) + " (averaged below)", highlight=False)
        for column, baseline in verdict.baselines.items():
            source = " (cached)" if baseline.get("source") == "cache" else ""
            console.print(f"  {column}{source}: {_timing_line(baseline.get('timing'))}", highlight=False)
            speedup, interval = verdict.speedup.get(column), verdict.speedup_interval.get(column)
            within = verdict.speedup_interval_within.get(column)
            if speedup is not None:
                spread = f" (95% interval {interval[0]:.4g}-{interval[1]:.4g}" if interval else ""
                spread += f"; within this evaluation alone {within[0]:.4g}-{within[1]:.4g})" if within else (
                    ")" if interval else "")
                console.print(f"    speedup over {column}: {speedup:.4g}x{spread}", highlight=False)
                undecided = _undecided_text(verdict, column)
                if undecided:
                    console.print(f"    {undecided}", highlight=False)
            for line in baseline.get("not_used", []):
                console.print(f"    cached {column} {line}", highlight=False, markup=False)
    phases = ", ".join(f"{k} {v:.2f}s" for k, v in verdict.phase_seconds.items())
    phases_text = f" ({phases})" if phases else " (nothing of the solution ran)"
    console.print(f"  wall {verdict.wall_seconds:.2f}s{phases_text}", highlight=False)
    if verdict.output_tail.strip() and not verdict.correct:
        lines = verdict.output_tail.rstrip().splitlines()[-OUTPUT_LINES_SHOWN:]
        console.print(f"  candidate output ({verdict.output_bytes} bytes, last lines):", highlight=False)
        for line in lines:
            console.print(f"    {line}", highlight=False, markup=False)


def _undecided_text(verdict: Verdict, column: str) -> str:
    """What to do about a speedup whose 95% interval holds 1.0 on a GPU: it is not known to be faster
    or slower than the column. One worker pair's interval reaches about 1% on each side on an H200;
    four pairs about 0.5% (docs/timing.md)."""
    interval = verdict.speedup_interval.get(column)
    if verdict.device == "cpu" or not interval or not interval[0] <= 1.0 <= interval[1]:
        return ""
    more = ("; more worker pairs narrow it (--pairs 4, or --max-pairs 8 to stop once it is within 0.5%)"
            if pairs_taken(verdict.timing) < 4 else "")
    return f"not decided: the interval holds 1.0, neither faster nor slower than {column} beyond its noise{more}"


def _truth_text(verdict: Verdict) -> str:
    """The errors against the float64 truth (kbench.judge.trusted.compare) and what KernelBench's criterion says."""
    truth = verdict.truth
    text = (f"against the float64 truth: max abs error {truth['candidate_error']:.3g} (the reference's "
            f"{truth['reference_error']:.3g}), {truth.get('share', 0):.0%} of the allowance"
            if "candidate_error" in truth else "no float64 truth")
    if truth.get("unavailable"):
        text += f" ({'; '.join(truth['unavailable'])}: judged by the reference's output)"
    if verdict.correct and verdict.kernelbench_correct is False:
        text += "; KernelBench's tolerance against the reference's output would call it incorrect"
    return text


def _errors_text(verdict: Verdict) -> str:
    """The largest errors over the trials, and the tolerance per dtype (``max_rel_error``
    is over the elements whose expected value is not below the tolerance's atol)."""
    rel = f", max rel error {verdict.max_rel_error:.3g}" if verdict.max_rel_error is not None else ""
    tolerance = "; ".join(f"{dtype} atol {t.get('atol', 0):g} rtol {t.get('rtol', 0):g}"
                          for dtype, t in verdict.tolerance.items())
    return f"max abs error {verdict.max_abs_error:.3g}{rel}" + (f", tolerance {tolerance}" if tolerance else "")


def speedup_table(verdicts: list[Verdict]) -> Table:
    on_cpu = any(v.device == "cpu" for v in verdicts)
    table = Table("problem", "status", "candidate", "eager", "speedup", "clock", title="Speedup over eager PyTorch",
                  caption=f"Note: {CPU_NOTE}." if on_cpu else None)
    for v in verdicts:
        speedup = v.speedup.get("eager")
        table.add_row(
            v.problem,
            v.status,
            _ms(v.runtime_ms),
            _ms(v.baselines.get("eager", {}).get("runtime_ms")),
            "-" if speedup is None else f"{speedup:.3g}x",
            (v.timing or {}).get("clock", "-"),
        )
    return table
