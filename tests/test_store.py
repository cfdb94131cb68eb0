import math
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from run_fixtures import config, make_verdict

from kbench.runs.manifest import Manifest
from kbench.runs.records import EvaluationRecord, ProblemRecord, RunRecord, SampleRecord, TurnRecord
from kbench.runs.score import columns_of, outcomes, score, score_by_turn
from kbench.runs.store import SCHEMA_VERSION, Store, StoreError

SCHEMA_V1 = Path(__file__).parent / "fixtures" / "stores" / "schema_v1.sql"
SCHEMA_V2 = Path(__file__).parent / "fixtures" / "stores" / "schema_v2.sql"
SCHEMA_V3 = Path(__file__).parent / "fixtures" / "stores" / "schema_v3.sql"


def new_run(store: Store, name: str = "r", manifest: Manifest | None = None) -> None:
    problems = [
        ProblemRecord("level1/a", 0, 1, "A", "/p/a.py", "a" * 64, "# a\n"),
        ProblemRecord("level1/b", 1, 1, "B", "/p/b.py", "b" * 64, "# b\n"),
    ]
    samples = [SampleRecord("level1/a", 0, "a.py", "/s/a.py", "c" * 64, "# solution a\n")]
    manifest = manifest or Manifest(config=config(), captured_at="then")
    store.create_run(RunRecord(name, "2026-11-29T12:00:00+00:00", config()), problems, samples, manifest)


def test_round_trip_of_every_record(tmp_path):
    manifest = Manifest(config=config(), captured_at="now", command=("kbench", "run"), git_revision="abc",
                        git_dirty=True, gpu_clocks={"clocks.sm": "1980 MHz"})
    verdict = make_verdict("level1/a", "correct", 1.5)
    evaluation = EvaluationRecord.from_verdict(verdict, "level1/a", 0, session=1, started_at="t0", finished_at="t1")
    missing = EvaluationRecord("level1/b", 0, "missing", False, "no solution", session=1)
    resumed = Manifest(config=config(), captured_at="later", git_revision="def")
    with Store(tmp_path / "k.db") as store:
        new_run(store, manifest=manifest)
        assert store.add_session("r", resumed) == 2
        store.record("r", evaluation)
        store.record("r", missing)
    with Store(tmp_path / "k.db", create=False) as store:
        data = store.load("r")
    assert data.run == RunRecord("r", "2026-11-29T12:00:00+00:00", config())
    assert [(s.number, s.manifest) for s in data.sessions] == [(1, manifest), (2, resumed)]
    assert resumed.changes_from(manifest) == {"git_revision": ("abc", "def"), "git_dirty": (True, None)}
    assert [p.problem_id for p in data.problems] == ["level1/a", "level1/b"]
    assert data.samples == [SampleRecord("level1/a", 0, "a.py", "/s/a.py", "c" * 64, "# solution a\n")]
    assert data.evaluations == [evaluation, missing]
    assert data.evaluations[0].verdict == verdict.to_dict()
    assert data.evaluations[0].speedup == {"eager": 1.5}


def test_non_finite_numbers_survive_the_store(tmp_path):
    verdict = make_verdict("level1/a", "incorrect")
    verdict.max_rel_error = math.inf
    with Store(tmp_path / "k.db") as store:
        new_run(store)
        store.record("r", EvaluationRecord.from_verdict(verdict, "level1/a", 0))
        assert store.evaluations("r")[0].verdict["max_rel_error"] == math.inf


def test_a_finished_evaluation_is_never_replaced_but_a_retried_one_is(tmp_path):
    with Store(tmp_path / "k.db") as store:
        new_run(store)
        store.record("r", EvaluationRecord("level1/a", 0, "infra_error", False, "worker lost"))
        store.record("r", EvaluationRecord.from_verdict(make_verdict("level1/a", "correct", 2.0), "level1/a", 0))
        assert [e.status for e in store.evaluations("r")] == ["correct"]
        with pytest.raises(StoreError, match="already evaluated"):
            store.record("r", EvaluationRecord("level1/a", 0, "incorrect", False, "again"))


def test_a_run_name_is_created_once(tmp_path):
    with Store(tmp_path / "k.db") as store:
        new_run(store)
        with pytest.raises(StoreError, match="already exists"):
            new_run(store)
        with pytest.raises(StoreError, match="no run named 'other'.*runs: r"):
            store.load("other")


def test_the_schema_is_versioned_and_marked(tmp_path):
    with Store(tmp_path / "k.db") as store:
        assert store.schema_version == SCHEMA_VERSION
    db = sqlite3.connect(tmp_path / "k.db")
    assert db.execute("PRAGMA application_id").fetchone()[0] == 0x6B62656E


def test_a_store_from_a_newer_kbench_is_refused(tmp_path):
    Store(tmp_path / "k.db").close()
    db = sqlite3.connect(tmp_path / "k.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="written by a newer kbench"):
        Store(tmp_path / "k.db")


@pytest.mark.parametrize("content", ["sqlite", "text"])
def test_files_that_are_not_kbench_stores_are_refused(tmp_path, content):
    path = tmp_path / "other.db"
    if content == "sqlite":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE notes (x)")
        db.commit()
        db.close()
    else:
        path.write_text("not a database at all " * 100)
    with pytest.raises(StoreError, match="not"):
        Store(path)


def test_reading_never_creates_a_store(tmp_path):
    with pytest.raises(StoreError, match="no kbench store"):
        Store(tmp_path / "absent.db", create=False)
    assert not (tmp_path / "absent.db").exists()


def test_a_store_written_by_schema_1_is_read_and_scored(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V1.read_text())
    db.close()
    with Store(path, create=False) as store:
        assert store.schema_version == SCHEMA_VERSION
        data = store.load("written-by-schema-1")
    assert data.sessions[0].manifest.git_revision == "4a291d9fde8cc38efad4941bd0e1dd6e41544a7e"
    assert [e.status for e in data.evaluations] == ["correct", "incorrect", "missing"]
    overall = score(outcomes(data), columns_of(data)).overall
    # relu correct at 1.25x, gelu incorrect, swish missing: of 3 problems.
    assert overall.correct_rate.value == pytest.approx(1 / 3)
    assert overall.fast_p["eager"][1.0].value == pytest.approx(1 / 3)
    assert overall.fast_p["eager"][1.5].value == 0.0


def test_connections_opening_one_new_store_at_once_all_succeed(tmp_path):
    def open_store(_):
        with Store(tmp_path / "k.db") as store:
            return store.schema_version

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(open_store, range(8))) == [SCHEMA_VERSION] * 8


def turn_record(turn: int, **changes) -> TurnRecord:
    fields = dict(problem_id="level1/a", sample_index=0, turn=turn, session=1, prompt=f"prompt {turn}",
                  prompt_record={"template": "one-shot", "turn": turn}, reply="```python\nclass ModelNew: ...\n```",
                  extraction={"ok": True, "how": "fenced"}, source="class ModelNew: ...\n", sha256="f" * 64,
                  generation={"finish_reason": "stop", "retries": 1}, input_tokens=10, output_tokens=5,
                  cost_usd=0.25, generated_at="t0")
    return TurnRecord(**{**fields, **changes})


def test_turns_are_stored_as_they_come_and_a_judged_one_is_never_replaced(tmp_path):
    with Store(tmp_path / "k.db") as store:
        new_run(store)
        waiting = turn_record(1)
        store.record_turn("r", waiting)
        assert store.turns("r") == [waiting] and not waiting.final
        verdict = make_verdict("level1/a", "incorrect")
        judged = turn_record(1, status="incorrect", reason=verdict.reason, verdict=verdict.to_dict(),
                             speedup={"eager": None}, evaluated_at="t1")
        store.record_turn("r", judged)
        failed = turn_record(2, reply=None, extraction=None, source=None, sha256=None, status="generation_error",
                             reason="timeout: no answer")
        store.record_turn("r", failed)
        retried = turn_record(2, status="correct", correct=True, speedup={"eager": 2.0}, runtime_ms=0.5)
        store.record_turn("r", retried)
        assert store.load("r").turns == [judged, retried]
        with pytest.raises(StoreError, match="already judged"):
            store.record_turn("r", turn_record(1))
        chosen = SampleRecord("level1/a", 0, "sample_0/turn_2", "openai/m", "f" * 64, "class ModelNew: ...\n")
        outcome = EvaluationRecord.from_verdict(make_verdict("level1/a", "correct", 2.0), "level1/a", 0, turn=2)
        store.finish_sample("r", chosen, outcome)
        data = store.load("r")
    assert data.samples[0] == chosen and data.evaluations[0].turn == 2


def test_a_store_written_by_schema_2_is_read_and_scored_by_turn(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V2.read_text())
    db.close()
    with Store(path, create=False) as store:
        assert store.schema_version == SCHEMA_VERSION
        data = store.load("written-by-schema-2")
    assert data.run.config.source == "openai" and data.run.config.turns == 2
    assert data.run.config.generation["template"]["name"] == "one-shot"
    assert data.sessions[0].manifest.generation["price"]["key"] == "openai/gpt-4o"
    assert [(t.problem_id, t.turn, t.status) for t in data.turns] == [
        ("level1/relu", 1, "incorrect"), ("level1/relu", 2, "correct"),
        ("level1/gelu", 1, "no_code"), ("level1/gelu", 2, "compile_error")]
    assert [(e.status, e.turn) for e in data.evaluations] == [("correct", 2), ("compile_error", 2)]
    by_turn = score_by_turn(data, columns_of(data), resamples=200)
    assert by_turn[1].overall.correct_rate.value == 0.0
    assert by_turn[2].overall.fast_p["eager"][1.0].value == pytest.approx(0.5)
    assert score(outcomes(data), columns_of(data), resamples=200).overall.correct_rate.value == pytest.approx(0.5)


def test_a_store_written_by_schema_3_is_read_and_its_runs_are_of_the_kernel_track(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V3.read_text())
    db.close()
    with Store(path, create=False) as store:
        assert store.schema_version == SCHEMA_VERSION
        data = store.load("written-by-schema-3")
        (track,) = store.db.execute("SELECT track FROM runs").fetchone()
    assert track == "kernel" and data.run.config.track == "kernel" and data.sessions[0].manifest.tasks == {}
    assert [(e.problem_id, e.status, e.session) for e in data.evaluations] == [
        ("level1/relu", "correct", 1), ("level1/gelu", "correct", 2)]
    assert [e.status for e in data.superseded] == ["rejected"]
    assert score(outcomes(data), columns_of(data), resamples=200).overall.correct_rate.value == 1.0


def test_a_repository_run_keeps_its_track_and_its_tasks_pins(tmp_path):
    repo = config(track="repo", baselines=("base",))
    pins = {"level1/a": {"sha256": "a" * 64, "commit": "c" * 40}}
    with Store(tmp_path / "k.db") as store:
        store.create_run(RunRecord("r", "now", repo), [ProblemRecord("level1/a", 0, None, "A", "/t/a/task.toml",
                                                                     "a" * 64, "id = 'a'\n")],
                         [], Manifest(config=repo, tasks=pins))
        (track,) = store.db.execute("SELECT track FROM runs WHERE name = 'r'").fetchone()
        data = store.load("r")
    assert track == "repo" and data.run.config.track == "repo" and data.sessions[0].manifest.tasks == pins
    assert data.run.config.differences(config(baselines=("base",))) == {"track": ("repo", "kernel")}
