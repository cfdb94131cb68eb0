"""A run as plain files other tools read: JSON lines, Parquet, or KernelBench's eval_results.json.

Every format carries every problem of the selection, missing solutions
included, so that a reader computing its own scores keeps them in the
denominator.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from kbench.core.versions import install_hint
from kbench.runs.records import RunData, finite
from kbench.suite.kernelbench import number_of

FORMATS = ("jsonl", "parquet", "kernelbench")
# Statuses after which the solution had been built, as KernelBench's "compiled" means.
BUILT_STATUSES = frozenset({"correct", "incorrect", "runtime_error"})


class ExportError(Exception):
    """An export that cannot be made here (a format without its library)."""


def rows(data: RunData) -> list[dict[str, Any]]:
    """One flat row per evaluation (or pending sample), in problem order."""
    problems = {p.problem_id: p for p in data.problems}
    samples = {(s.problem_id, s.index): s for s in data.samples}
    evaluations = {(e.problem_id, e.sample_index): e for e in data.evaluations}
    keys = list(samples) + [k for k in evaluations if k not in samples]
    keys.sort(key=lambda k: (problems[k[0]].position, k[1]))
    result = []
    for problem_id, index in keys:
        problem, sample, evaluation = problems[problem_id], samples.get((problem_id, index)), evaluations.get((problem_id, index))
        result.append(
            {
                "run": data.run.name,
                "problem_id": problem_id,
                "level": problem.level,
                "problem_name": problem.name,
                "problem_sha256": problem.sha256,
                "sample_index": index,
                "sample_name": sample.name if sample else None,
                "solution_origin": sample.origin if sample else None,
                "solution_sha256": sample.sha256 if sample else None,
                "status": evaluation.status if evaluation else "pending",
                "correct": evaluation.correct if evaluation else False,
                "reason": evaluation.reason if evaluation else "",
                "runtime_ms": evaluation.runtime_ms if evaluation else None,
                "baselines_ms": evaluation.baselines if evaluation else {},
                "speedup": evaluation.speedup if evaluation else {},
                "session": evaluation.session if evaluation else None,
                "finished_at": evaluation.finished_at if evaluation else None,
                "verdict": evaluation.verdict if evaluation else None,
            }
        )
    return result


def write_jsonl(data: RunData, out: TextIO) -> int:
    """A first line describing the run (config and each session's manifest), then one
    line per evaluation; the number of evaluation lines."""
    header = {
        "record": "run",
        "run": data.run.name,
        "created_at": data.run.created_at,
        "config": asdict(data.run.config),
        "sessions": [{"number": s.number, "manifest": s.manifest.to_dict()} for s in data.sessions],
    }
    out.write(json.dumps(finite(header), allow_nan=False) + "\n")
    lines = rows(data)
    for row in lines:
        out.write(json.dumps(finite({"record": "evaluation", **row}), allow_nan=False, default=str) + "\n")
    return len(lines)


def write_parquet(data: RunData, path: Path) -> int:
    """One row per evaluation; speedups and baseline times as one column per baseline,
    the verdict as JSON text, and the run's config and manifests in the file's metadata."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ExportError(f"parquet export needs pyarrow ({install_hint('pyarrow', 'parquet')}); jsonl needs "
                          "nothing") from exc
    table_rows = []
    columns = sorted({c for row in rows(data) for c in (*row["speedup"], *row["baselines_ms"])})
    for row in rows(data):
        flat = {k: v for k, v in row.items() if k not in ("speedup", "baselines_ms", "verdict")}
        for column in columns:
            flat[f"speedup_{column}"] = row["speedup"].get(column)
            flat[f"baseline_ms_{column}"] = row["baselines_ms"].get(column)
        flat["verdict"] = None if row["verdict"] is None else json.dumps(finite(row["verdict"]), default=str)
        table_rows.append(flat)
    table = pa.Table.from_pylist(table_rows)
    metadata = {
        b"kbench.config": json.dumps(asdict(data.run.config)).encode(),
        b"kbench.manifests": json.dumps(finite([s.manifest.to_dict() for s in data.sessions])).encode(),
    }
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata}), path)
    return len(table_rows)


def kernelbench(data: RunData) -> dict[str, list[dict[str, Any]]]:
    """The shape of KernelBench's ``eval_results.json``: ``{problem: [sample, ...]}``.

    Problems are keyed by KernelBench's number when every problem of the run has
    one (its file name starts with ``<number>_``) and the run holds one level,
    as KernelBench's own files are per level; by kbench problem id otherwise.
    Keyed by number, they come in number order: KernelBench's analysis script
    (``scripts/benchmark_eval_analysis.py``) pairs each result with its baseline
    file's entry by position, and that file lists a level's problems in number order.
    ``runtime`` is the candidate's median in milliseconds (-1.0 when not timed).
    """
    numbers = {p.problem_id: number_of(p.path) for p in data.problems}
    by_number = None not in numbers.values() and len({p.level for p in data.problems}) == 1
    problems = {p.problem_id: p for p in data.problems}
    results: dict[str, list[dict[str, Any]]] = {}
    for row in rows(data):
        key = str(numbers[row["problem_id"]]) if by_number else row["problem_id"]
        verdict = row["verdict"] or {}
        timing = verdict.get("timing") or {}
        phases = verdict.get("phase_seconds") or {}
        results.setdefault(key, []).append(
            finite(
                {
                    "sample_id": row["sample_index"],
                    "compiled": row["status"] in BUILT_STATUSES or "build" in phases,
                    "correctness": bool(row["correct"]),
                    "metadata": {
                        "hardware": verdict.get("device_name"),
                        "device": verdict.get("device"),
                        "kbench_problem": row["problem_id"],
                        "kbench_level": problems[row["problem_id"]].level,
                        "kbench_status": row["status"],
                        "kbench_reason": row["reason"],
                        "kbench_baselines_ms": row["baselines_ms"],
                        "kbench_speedup": row["speedup"],
                        "solution": row["sample_name"],
                    },
                    "runtime": row["runtime_ms"] if row["runtime_ms"] is not None else -1.0,
                    "runtime_stats": {
                        "mean": timing.get("mean_ms"),
                        "median": timing.get("median_ms"),
                        "std": timing.get("stdev_ms"),
                        "min": timing.get("min_ms"),
                        "max": timing.get("max_ms"),
                        "num_trials": timing.get("count"),
                        "hardware": verdict.get("device_name"),
                        "device": verdict.get("device"),
                    }
                    if timing
                    else {},
                }
            )
        )
    return dict(sorted(results.items(), key=lambda item: int(item[0]))) if by_number else results


def write_kernelbench(data: RunData, out: TextIO) -> int:
    results = kernelbench(data)
    out.write(json.dumps(results, indent=4, allow_nan=False) + "\n")
    return sum(len(samples) for samples in results.values())
