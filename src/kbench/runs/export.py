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
from kbench.runs.records import RunData, TurnRecord, finite
from kbench.runs.score import cpu_note
from kbench.suite.kernelbench import number_of

FORMATS = ("jsonl", "parquet", "kernelbench")
# Statuses after which the solution had been built, as KernelBench's "compiled" means.
BUILT_STATUSES = frozenset({"correct", "incorrect", "runtime_error"})


class ExportError(Exception):
    """An export that cannot be made here (a format without its library)."""


# The fields of one exported sample, in order; docs/export.md describes each (tests/test_export.py holds them
# to it). Kinds: how a field is typed in Parquet ("json": JSON text there, an object in JSON lines).
SAMPLE_FIELDS: dict[str, str] = {
    "run": "string",
    "track": "string",
    "problem_id": "string",
    "level": "int64",
    "problem_name": "string",
    "problem_path": "string",
    "problem_sha256": "string",
    "problem_source": "string",
    "sample_index": "int64",
    "sample_name": "string",
    "solution_origin": "string",
    "solution_sha256": "string",
    "solution_source": "string",
    "status": "string",
    "correct": "bool",
    "correct_kernelbench": "bool",
    "reason": "string",
    "runtime_ms": "float64",
    "baselines_ms": "columns",
    "speedup": "columns",
    "cpu_note": "string",
    "session": "int64",
    "started_at": "string",
    "finished_at": "string",
    "turn": "int64",
    "n_turns": "int64",
    "input_tokens": "int64",
    "output_tokens": "int64",
    "cost_usd": "float64",
    "verdict": "json",
    "turns": "turns",
    "superseded": "json",
    "run_config": "json",
}
# The fields of each element of a sample's ``turns``: a TurnRecord without the sample's keys.
TURN_FIELDS: dict[str, str] = {
    "turn": "int64",
    "session": "int64",
    "prompt": "string",
    "prompt_record": "json",
    "reply": "string",
    "extraction": "json",
    "source": "string",
    "sha256": "string",
    "generation": "json",
    "input_tokens": "int64",
    "output_tokens": "int64",
    "cost_usd": "float64",
    "generated_at": "string",
    "status": "string",
    "correct": "bool",
    "reason": "string",
    "runtime_ms": "float64",
    "speedup": "json",
    "verdict": "json",
    "evaluated_at": "string",
}


def _total(values: list[Any]) -> Any:
    """The sum of the known values; None when none is known (no turn, or a provider that gave no usage)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _turn(turn: TurnRecord) -> dict[str, Any]:
    return {name: getattr(turn, name) for name in TURN_FIELDS}


def rows(data: RunData) -> list[dict[str, Any]]:
    """One row per evaluation (or pending sample), in problem order: every field of SAMPLE_FIELDS,
    everything the store holds about the sample (its source, its turns, the verdicts a re-judging
    replaced) and the run's settings, so that one row stands alone in a data set."""
    problems = {p.problem_id: p for p in data.problems}
    samples = {(s.problem_id, s.index): s for s in data.samples}
    evaluations = {(e.problem_id, e.sample_index): e for e in data.evaluations}
    turns: dict[tuple[str, int], list[TurnRecord]] = {}
    for turn in data.turns:
        turns.setdefault((turn.problem_id, turn.sample_index), []).append(turn)
    superseded: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for record in data.superseded:
        superseded.setdefault((record.problem_id, record.sample_index), []).append(asdict(record))
    settings = asdict(data.run.config)
    note = cpu_note(data.run.config.device) if data.run.config.measure_time else None
    keys = list(samples) + [k for k in evaluations if k not in samples]
    keys.sort(key=lambda k: (problems[k[0]].position, k[1]))
    result = []
    for problem_id, index in keys:
        problem, sample, evaluation = problems[problem_id], samples.get((problem_id, index)), evaluations.get((problem_id, index))
        sample_turns = sorted(turns.get((problem_id, index), []), key=lambda t: t.turn)
        result.append(
            {
                "run": data.run.name,
                "track": data.run.config.track,
                "problem_id": problem_id,
                "level": problem.level,
                "problem_name": problem.name,
                "problem_path": problem.path,
                "problem_sha256": problem.sha256,
                "problem_source": problem.source,
                "sample_index": index,
                "sample_name": sample.name if sample else None,
                "solution_origin": sample.origin if sample else None,
                "solution_sha256": sample.sha256 if sample else None,
                "solution_source": sample.source if sample else None,
                "status": evaluation.status if evaluation else "pending",
                "correct": evaluation.correct if evaluation else False,
                "correct_kernelbench": bool(evaluation and evaluation.correct
                                            and (evaluation.verdict or {}).get("kernelbench_correct") is not False),
                "reason": evaluation.reason if evaluation else "",
                "runtime_ms": evaluation.runtime_ms if evaluation else None,
                "baselines_ms": evaluation.baselines if evaluation else {},
                "speedup": evaluation.speedup if evaluation else {},
                "cpu_note": note,
                "session": evaluation.session if evaluation else None,
                "started_at": evaluation.started_at if evaluation else None,
                "finished_at": evaluation.finished_at if evaluation else None,
                "turn": evaluation.turn if evaluation else None,
                "n_turns": len(sample_turns),
                "input_tokens": _total([t.input_tokens for t in sample_turns]),
                "output_tokens": _total([t.output_tokens for t in sample_turns]),
                "cost_usd": _total([t.cost_usd for t in sample_turns]),
                "verdict": evaluation.verdict if evaluation else None,
                "turns": [_turn(t) for t in sample_turns],
                "superseded": superseded.get((problem_id, index), []),
                "run_config": settings,
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


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(finite(value), allow_nan=False, default=str)


def parquet_schema(columns: tuple[str, ...]) -> Any:
    """The Parquet schema of a run whose baseline columns are ``columns``: SAMPLE_FIELDS in order,
    each "columns" field as one float64 column per baseline (``speedup_<col>``, ``baseline_ms_<col>``),
    "json" fields as JSON text, ``turns`` as a list of structs of TURN_FIELDS."""
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "json": pa.string()}
    turn = pa.struct([pa.field(name, types[kind]) for name, kind in TURN_FIELDS.items()])
    fields = []
    for name, kind in SAMPLE_FIELDS.items():
        if kind == "columns":
            prefix = "speedup_" if name == "speedup" else "baseline_ms_"
            fields.extend(pa.field(prefix + column, pa.float64()) for column in columns)
        elif kind == "turns":
            fields.append(pa.field(name, pa.list_(turn)))
        else:
            fields.append(pa.field(name, types[kind]))
    return pa.schema(fields)


def _parquet_row(row: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, kind in SAMPLE_FIELDS.items():
        if kind == "columns":
            prefix = "speedup_" if name == "speedup" else "baseline_ms_"
            flat.update({prefix + column: row[name].get(column) for column in columns})
        elif kind == "turns":
            flat[name] = [{k: _json_text(v) if TURN_FIELDS[k] == "json" else v for k, v in turn.items()}
                          for turn in row[name]]
        else:
            flat[name] = _json_text(row[name]) if kind == "json" else row[name]
    return flat


def write_parquet(data: RunData, path: Path) -> int:
    """One row per evaluation (parquet_schema); the run's config and manifests also in the file's metadata."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ExportError(f"parquet export needs pyarrow ({install_hint('pyarrow', 'parquet')}); jsonl needs "
                          "nothing") from exc
    lines = rows(data)
    columns = tuple(sorted({c for row in lines for c in (*row["speedup"], *row["baselines_ms"])}))
    table = pa.Table.from_pylist([_parquet_row(row, columns) for row in lines], schema=parquet_schema(columns))
    metadata = {
        b"kbench.config": json.dumps(asdict(data.run.config)).encode(),
        b"kbench.manifests": json.dumps(finite([s.manifest.to_dict() for s in data.sessions])).encode(),
    }
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata}), path)
    return len(lines)


def kernelbench(data: RunData) -> dict[str, list[dict[str, Any]]]:
    """The shape of KernelBench's ``eval_results.json``: ``{problem: [sample, ...]}``.

    Problems are keyed by KernelBench's number when every problem of the run has
    one (its file name starts with ``<number>_``) and the run holds one level,
    as KernelBench's own files are per level; by kbench problem id otherwise.
    Keyed by number, they come in number order: KernelBench's analysis script
    (``scripts/benchmark_eval_analysis.py``) pairs each result with its baseline
    file's entry by position, and that file lists a level's problems in number order.
    ``runtime`` is the candidate's median in milliseconds (-1.0 when not timed).
    A repository-track run has no such shape (its samples are patches to tasks): ExportError.
    """
    if data.run.config.track != "kernel":
        raise ExportError(f"run {data.run.name} is of the {data.run.config.track} track: KernelBench's "
                          "eval_results.json holds problems only (jsonl and parquet carry every track)")
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
                    "correctness": row["correct_kernelbench"],  # by KernelBench's criterion (docs/correctness.md)
                    "metadata": {
                        "hardware": verdict.get("device_name"),
                        "device": verdict.get("device"),
                        "kbench_problem": row["problem_id"],
                        "kbench_level": problems[row["problem_id"]].level,
                        "kbench_status": row["status"],
                        "kbench_correct": bool(row["correct"]),
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
