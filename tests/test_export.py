"""``kbench export --format jsonl|parquet``: every sample with everything the store holds about it
(source, turns, verdict, settings), the Parquet schema fixed and documented field by field.

Hand-made runs (tests/view_fixtures.py): nothing is judged.
"""

import json
import re
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from typer.testing import CliRunner
from view_fixtures import GELU_REASON, base_run, generated_run, make_store

from kbench.cli import app
from kbench.runs import export
from kbench.runs.records import EvaluationRecord

DOCS = Path(__file__).resolve().parent.parent / "docs" / "export.md"


def exported_jsonl(store: Path, run: str, tmp_path: Path) -> list[dict]:
    target = tmp_path / f"{run}.jsonl"
    done = CliRunner().invoke(app, ["export", run, "--format", "jsonl", "--db", str(store), "-o", str(target)])
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in target.read_text().splitlines()]


def test_jsonl_carries_each_turns_prompt_reply_tokens_cost_and_verdict(tmp_path):
    store = make_store(tmp_path / "kbench.db")
    header, row = exported_jsonl(store, "gen", tmp_path)
    assert header["record"] == "run" and header["config"]["turns"] == 2
    assert row["record"] == "evaluation" and row["problem_id"] == "level1/relu" and row["status"] == "correct"
    assert [t["turn"] for t in row["turns"]] == [1, 2] and row["turn"] == 2 and row["n_turns"] == 2
    first, second = row["turns"]
    assert first["prompt"] == "Write a kernel for ReLU" and first["reply"] == "```python\nbad\n```"
    assert first["source"] == "bad" and first["sha256"] == "b" * 64 and first["status"] == "incorrect"
    assert first["reason"] == "incorrect: shape (2,) != (3,)" and first["prompt_record"] == {"template": "one-shot"}
    assert (first["input_tokens"], first["output_tokens"], first["cost_usd"]) == (100, 50, 0.001)
    assert second["prompt"] == "This is turn 2: fix it" and second["speedup"] == {"eager": 1.7}
    assert second["generation"] == {"model": "test-model"}
    assert (row["input_tokens"], row["output_tokens"]) == (220, 110) and row["cost_usd"] == pytest.approx(0.0022)
    assert row["run_config"]["solutions"] == "openai/test-model" and row["run_config"]["turns"] == 2
    assert set(row) == {"record", *export.SAMPLE_FIELDS} and set(first) == set(export.TURN_FIELDS)


def test_jsonl_carries_the_solution_source_its_hash_and_the_whole_reason_and_verdict(tmp_path):
    data = base_run()
    data = replace(data, samples=[replace(s, source=f"# solution of {s.problem_id}\n", sha256="f" * 64)
                                  for s in data.samples])
    rows = {(r["problem_id"], r["sample_index"]): r for r in export.rows(data)}
    gelu = rows["level1/gelu", 0]
    assert gelu["solution_source"] == "# solution of level1/gelu\n" and gelu["solution_sha256"] == "f" * 64
    assert gelu["reason"] == GELU_REASON  # multi-line, not the one-line cut of `kbench show`
    assert gelu["verdict"]["trials"][0]["detail"] == "max abs error 0.5"
    assert gelu["turns"] == [] and gelu["n_turns"] == 0 and gelu["input_tokens"] is None and gelu["turn"] is None
    assert gelu["problem_path"] == "/p/level1/gelu.py" and gelu["run_config"] == asdict(data.run.config)
    missing = rows["level1/matmul", 0]
    assert missing["status"] == "missing" and missing["solution_source"] is None and missing["sample_name"] is None
    assert rows["level2/gemm_relu", 0]["status"] == "pending" and rows["level2/gemm_relu", 0]["verdict"] is None


def test_a_rejudged_sample_carries_the_verdicts_it_replaced():
    data = base_run()
    earlier = EvaluationRecord("level1/relu", 0, "incorrect", False, "judged before the fix", session=1)
    row = next(r for r in export.rows(replace(data, superseded=[earlier])) if r["problem_id"] == "level1/relu")
    assert [(s["status"], s["reason"]) for s in row["superseded"]] == [("incorrect", "judged before the fix")]


def test_the_parquet_schema_is_fixed_and_reads_back_as_the_jsonl_rows(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    store = make_store(tmp_path / "kbench.db")
    for run in ("gen", "base"):
        target = tmp_path / f"{run}.parquet"
        done = CliRunner().invoke(app, ["export", run, "--format", "parquet", "--db", str(store), "-o", str(target)])
        assert done.exit_code == 0, done.output
        table = pq.read_table(target)
        assert table.schema.equals(export.parquet_schema(("eager",))), table.schema  # the same for every run
        types = {field.name: field.type for field in table.schema}
        assert types["level"] == pa.int64() and types["correct"] == pa.bool_() and types["cost_usd"] == pa.float64()
        assert types["speedup_eager"] == pa.float64() and types["baseline_ms_eager"] == pa.float64()
        assert types["verdict"] == pa.string() and types["run_config"] == pa.string()
        turn = types["turns"].value_type
        assert [turn.field(i).name for i in range(turn.num_fields)] == list(export.TURN_FIELDS)
        assert turn.field("prompt").type == pa.string() and turn.field("input_tokens").type == pa.int64()
        assert json.loads(table.schema.metadata[b"kbench.config"])["solutions"]
        parquet_rows = table.to_pylist()
        jsonl_rows = exported_jsonl(store, run, tmp_path)[1:]
        assert len(parquet_rows) == len(jsonl_rows)
        for flat, row in zip(parquet_rows, jsonl_rows):
            for name, kind in export.SAMPLE_FIELDS.items():
                if kind == "columns":
                    prefix = "speedup_" if name == "speedup" else "baseline_ms_"
                    assert flat[prefix + "eager"] == row[name].get("eager")
                elif kind == "json":
                    assert (None if flat[name] is None else json.loads(flat[name])) == row[name], name
                elif kind == "turns":
                    assert [{k: json.loads(v) if export.TURN_FIELDS[k] == "json" and v is not None else v
                             for k, v in t.items()} for t in flat[name]] == row[name]
                else:
                    assert flat[name] == row[name], name
    gen = pq.read_table(tmp_path / "gen.parquet").to_pylist()[0]
    assert gen["turns"][1]["reply"] == "```python\ngood\n```" and gen["solution_sha256"] == "x"


def test_every_exported_field_is_documented_and_every_documented_field_exported():
    text = DOCS.read_text()
    section = text[text.index("## `kbench export"):text.index("## KernelBench's own level 1")]
    samples, turns = section.split("Each element of `turns`")
    documented = [set(re.findall(r"^\| `(\w+)`(?:, `(\w+)`)?", part, re.MULTILINE)) for part in (samples, turns)]
    names = [{name for pair in found for name in pair if name} for found in documented]
    assert names[0] == set(export.SAMPLE_FIELDS)
    assert names[1] == set(export.TURN_FIELDS)


def test_the_kernelbench_layout_is_unchanged():
    results = export.kernelbench(base_run())
    assert set(results["level1/gelu"][0]) == {"sample_id", "compiled", "correctness", "metadata", "runtime",
                                              "runtime_stats"}
    assert results["level1/relu"][0]["correctness"] is True and results["level1/softmax"][1]["sample_id"] == 1
