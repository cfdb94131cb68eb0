"""Human-readable renderings of verdicts for the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kbench.core.verdict import Verdict

STATUS_STYLE = {"correct": "bold green", "incorrect": "bold red", "rejected": "bold magenta"}
OUTPUT_LINES_SHOWN = 15


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.6g} ms"


def _timing_line(timing: dict | None) -> str:
    if not timing:
        return "-"
    rel = timing.get("rel_error")
    rel_text = f", median +-{100 * rel:.2g}%" if rel is not None else ""
    graph_text = ", CUDA graph replays" if (timing.get("settings") or {}).get("cuda_graph") else ""
    return (
        f"median {timing['median_ms']:.6g} ms (IQR {timing['p25_ms']:.6g}-{timing['p75_ms']:.6g}, "
        f"n={timing['count']}{rel_text}, {timing['clock']}{graph_text})"
    )


def print_verdict(console: Console, verdict: Verdict) -> None:
    style = STATUS_STYLE.get(verdict.status, "bold yellow")
    console.print(f"[{style}]{verdict.status}[/{style}]  {verdict.problem} on {verdict.device} "
                  f"({verdict.device_name or 'device unknown'}, size {verdict.size})", highlight=False)
    console.print(f"  reason: {verdict.reason}", highlight=False, markup=False)
    if verdict.sandbox.get("kind") == "none":
        console.print("  [bold yellow]not sandboxed[/bold yellow] (--no-sandbox): the candidate ran with the judge's "
                      "privileges; this verdict is not proof against a candidate that reaches outside its process",
                      highlight=False)
    for flag in verdict.flags:
        console.print(f"  flag ({verdict.policy} policy): {flag}", highlight=False, markup=False)
    if verdict.max_abs_error is not None:
        console.print(f"  max abs error {verdict.max_abs_error:.3g}, max rel error {verdict.max_rel_error:.3g}, "
                      f"tolerance {verdict.tolerance}", highlight=False)
    if verdict.correct and verdict.timing:
        rounds = len(verdict.timing.get("rounds", [])) or 1
        console.print(f"  candidate: {_timing_line(verdict.timing)}, {rounds} round(s)", highlight=False)
        for column, baseline in verdict.baselines.items():
            source = " (cached)" if baseline.get("source") == "cache" else ""
            console.print(f"  {column}{source}: {_timing_line(baseline.get('timing'))}", highlight=False)
            speedup, interval = verdict.speedup.get(column), verdict.speedup_interval.get(column)
            if speedup is not None:
                # Within this evaluation's processes; a re-evaluation moves more (docs/timing.md, Repeatability).
                within = f" (95% interval within this evaluation {interval[0]:.4g}-{interval[1]:.4g})" if interval else ""
                console.print(f"    speedup over {column}: {speedup:.4g}x{within}", highlight=False)
            for line in baseline.get("not_used", []):
                console.print(f"    cached {column} {line}", highlight=False, markup=False)
    phases = ", ".join(f"{k} {v:.2f}s" for k, v in verdict.phase_seconds.items())
    console.print(f"  wall {verdict.wall_seconds:.2f}s ({phases})", highlight=False)
    if verdict.output_tail.strip() and not verdict.correct:
        lines = verdict.output_tail.rstrip().splitlines()[-OUTPUT_LINES_SHOWN:]
        console.print(f"  candidate output ({verdict.output_bytes} bytes, last lines):", highlight=False)
        for line in lines:
            console.print(f"    {line}", highlight=False, markup=False)


def speedup_table(verdicts: list[Verdict]) -> Table:
    table = Table("problem", "status", "candidate", "eager", "speedup", "clock", title="Speedup over eager PyTorch")
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
