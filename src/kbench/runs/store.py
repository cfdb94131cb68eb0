"""The store: runs, their manifests, problems, samples, evaluations and baselines in one SQLite file.

One file and no server, so a run can be copied, archived and reopened like a
log. Every evaluation is committed (with a synchronous write) the moment its
verdict is known, so a run killed at any point loses at most the evaluation
that was in flight. The schema carries a version (``PRAGMA user_version``);
opening an older store upgrades it in place through ``MIGRATIONS``, and a store
written by a newer kbench is refused rather than misread.

Records read back are dataclasses. A verdict is kept whole as the JSON the
judge wrote (``EvaluationRecord.verdict``) so that no field of it is lost when
the ``Verdict`` class changes; the fields the scores need are also columns.

Schema 2 adds what runs that ask models for solutions need (docs/agent.md):
the ``turns`` table holds every turn of every sample (the prompt, the reply,
the solution taken from it, tokens and cost, and the verdict on it), and
``evaluations.turn`` says which turn a sample's outcome is. Runs from replayed
files leave both empty, exactly as schema 1 stored them.

Schema 3 adds ``superseded``: the verdicts a re-judging replaced (``kbench run
--rejudge``), each whole as its ``EvaluationRecord`` in JSON with the session
that replaced it, so that a run repaired after a judge defect keeps what it said
before (``kbench show``).

Schema 4 adds ``runs.track``: the run's track (``kernel`` or ``repo``, as its config
says; runs stored before are ``kernel``). A repository run stores its tasks in
``problems`` (the task id, its hash and task file), its patches as the samples'
sources, and everything else as a run of problems does (docs/runs.md).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kbench.core.verdict import encodable
from kbench.runs.manifest import Manifest, RunConfig
from kbench.runs.records import (
    RETRIED_STATUSES,
    EvaluationRecord,
    ProblemRecord,
    RunData,
    RunRecord,
    SampleRecord,
    SessionRecord,
    TurnRecord,
)
from kbench.runs.schema import MIGRATIONS, SCHEMA_VERSION  # noqa: F401 - SCHEMA_VERSION: read from here too

DEFAULT_PATH = "kbench.db"
APPLICATION_ID = 0x6B62656E  # "kben": marks the file as a kbench store
BUSY_TIMEOUT_SECONDS = 60

class StoreError(Exception):
    """A store that cannot be used (not a kbench store, too new, absent), or a misuse of one."""


class Store:
    """A kbench store file; ``create=False`` refuses to make a new, empty one."""

    def __init__(self, path: str | Path = DEFAULT_PATH, *, create: bool = True):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no kbench store at {self.path}")
        try:
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA synchronous = FULL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable kbench store ({exc})") from exc

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _migrate(self) -> None:
        """Create or upgrade the schema. Under a write lock taken before the version is read,
        so two processes opening one new store at once do not both build it."""
        if self._checked_version() == SCHEMA_VERSION:
            return  # the usual case, which needs no lock (and works on a read-only file)
        self.db.isolation_level = None
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for target in range(self._checked_version() + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {target}")
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        finally:
            self.db.isolation_level = ""

    def _checked_version(self) -> int:
        # One statement, so one snapshot: read separately, another connection
        # could create the schema between the reads and make a new store look foreign.
        version, app_id, tables = self.db.execute(
            "SELECT (SELECT user_version FROM pragma_user_version), "
            "(SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_master)"
        ).fetchone()
        has_tables = tables > 0
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and has_tables):
            raise StoreError(f"{self.path} is an SQLite file, but not a kbench store")
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, written by a newer kbench; "
                f"this one reads up to version {SCHEMA_VERSION}"
            )
        return version

    @property
    def schema_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    # --- writing ----------------------------------------------------------
    def create_run(
        self, run: RunRecord, problems: list[ProblemRecord], samples: list[SampleRecord], manifest: Manifest
    ) -> None:
        """A new run with its first session, in one transaction."""
        if self.run(run.name) is not None:
            raise StoreError(f"a run named {run.name!r} already exists in {self.path}")
        with self.db:
            self.db.execute(
                "INSERT INTO runs (name, created_at, config, track) VALUES (?, ?, ?, ?)",
                _row(run.name, run.created_at, _dumps(asdict(run.config)), run.config.track),
            )
            self.db.executemany(
                "INSERT INTO problems (run, problem_id, position, level, name, path, sha256, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [_row(run.name, p.problem_id, p.position, p.level, p.name, p.path, p.sha256, p.source) for p in problems],
            )
            self.db.executemany(
                "INSERT INTO samples (run, problem_id, sample_index, name, origin, sha256, source) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [_row(run.name, s.problem_id, s.index, s.name, s.origin, s.sha256, s.source) for s in samples],
            )
            self._insert_session(run.name, 1, manifest)

    def add_session(self, run_name: str, manifest: Manifest) -> int:
        """Record a start or resumption of a run; its number (1 for the first)."""
        with self.db:
            (last,) = self.db.execute(
                "SELECT coalesce(max(number), 0) FROM sessions WHERE run = ?", (run_name,)
            ).fetchone()
            self._insert_session(run_name, last + 1, manifest)
        return last + 1

    def _insert_session(self, run_name: str, number: int, manifest: Manifest) -> None:
        self.db.execute(
            "INSERT INTO sessions (run, number, started_at, manifest) VALUES (?, ?, ?, ?)",
            (run_name, number, manifest.captured_at, _dumps(manifest.to_dict())),
        )

    def record(self, run_name: str, evaluation: EvaluationRecord) -> None:
        """Commit one evaluation now. A finished one is never replaced; only one of
        the ``RETRIED_STATUSES`` is, by its retry."""
        with self.db:
            self._insert_evaluation(run_name, evaluation)

    def supersede(self, run_name: str, evaluation: EvaluationRecord) -> None:
        """A sample judged again (``kbench run --rejudge``): the verdict it had moves to the
        history (``superseded``, marked with the new one's session) and the new one takes its
        place, in one transaction."""
        e = evaluation
        with self.db:
            old = self._read_evaluations(run_name, "AND e.problem_id = ? AND e.sample_index = ?",
                                         (e.problem_id, e.sample_index))
            if not old:
                raise StoreError(f"run {run_name!r}: {e.problem_id} sample {e.sample_index} has no verdict to replace")
            self.db.execute(
                "INSERT INTO superseded (run, problem_id, sample_index, superseded_in, record) VALUES (?, ?, ?, ?, ?)",
                (run_name, e.problem_id, e.sample_index, e.session, _dumps(asdict(old[0]))),
            )
            self._delete_evaluation(run_name, e.problem_id, e.sample_index)
            self._insert_evaluation(run_name, e)

    def finish_sample(self, run_name: str, sample: SampleRecord, evaluation: EvaluationRecord) -> None:
        """A generated sample's outcome: the solution of its chosen turn into ``samples``
        and the verdict into ``evaluations``, in one transaction."""
        with self.db:
            updated = self.db.execute(
                "UPDATE samples SET name = ?, origin = ?, sha256 = ?, source = ? "
                "WHERE run = ? AND problem_id = ? AND sample_index = ?",
                _row(sample.name, sample.origin, sample.sha256, sample.source, run_name, sample.problem_id, sample.index),
            ).rowcount
            if not updated:
                raise StoreError(f"run {run_name!r} has no sample {sample.index} of {sample.problem_id}")
            self._insert_evaluation(run_name, evaluation)

    def record_turn(self, run_name: str, turn: TurnRecord) -> None:
        """Commit one turn now (its reply, then again with its verdict). A turn judged for
        good is never replaced."""
        t = turn
        with self.db:
            replaced = self.db.execute(
                "SELECT status FROM turns WHERE run = ? AND problem_id = ? AND sample_index = ? AND turn = ?",
                (run_name, t.problem_id, t.sample_index, t.turn),
            ).fetchone()
            if replaced is not None and replaced[0] is not None and replaced[0] not in RETRIED_STATUSES:
                raise StoreError(
                    f"run {run_name!r}: {t.problem_id} sample {t.sample_index} turn {t.turn} is already judged"
                )
            self.db.execute(
                "INSERT OR REPLACE INTO turns (run, problem_id, sample_index, turn, session, prompt, prompt_record, "
                "reply, extraction, source, sha256, generation, input_tokens, output_tokens, cost_usd, generated_at, "
                "status, correct, reason, runtime_ms, speedup, verdict, evaluated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _row(
                    run_name, t.problem_id, t.sample_index, t.turn, t.session, t.prompt, _dumps(t.prompt_record),
                    t.reply, None if t.extraction is None else _dumps(t.extraction), t.source, t.sha256,
                    _dumps(t.generation), t.input_tokens, t.output_tokens, t.cost_usd, t.generated_at,
                    t.status, int(t.correct), t.reason, t.runtime_ms, _dumps(t.speedup),
                    None if t.verdict is None else _dumps(t.verdict), t.evaluated_at,
                ),
            )

    def _insert_evaluation(self, run_name: str, evaluation: EvaluationRecord) -> None:
        e = evaluation
        replaced = self.db.execute(
            "SELECT status FROM evaluations WHERE run = ? AND problem_id = ? AND sample_index = ?",
            (run_name, e.problem_id, e.sample_index),
        ).fetchone()
        if replaced is not None:
            if replaced[0] not in RETRIED_STATUSES:
                raise StoreError(
                    f"run {run_name!r}: {e.problem_id} sample {e.sample_index} is already evaluated"
                )
            self._delete_evaluation(run_name, e.problem_id, e.sample_index)
        self.db.execute(
            "INSERT INTO evaluations (run, problem_id, sample_index, session, status, correct, reason, "
            "runtime_ms, started_at, finished_at, verdict, turn) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _row(
                run_name,
                e.problem_id,
                e.sample_index,
                e.session,
                e.status,
                int(e.correct),
                e.reason,
                e.runtime_ms,
                e.started_at,
                e.finished_at,
                None if e.verdict is None else _dumps(e.verdict),
                e.turn,
            ),
        )
        self.db.executemany(
            "INSERT INTO baselines (run, problem_id, sample_index, baseline, runtime_ms, speedup) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                _row(run_name, e.problem_id, e.sample_index, column, e.baselines.get(column), e.speedup.get(column))
                for column in sorted(set(e.baselines) | set(e.speedup))
            ],
        )

    def _delete_evaluation(self, run_name: str, problem_id: str, sample_index: int) -> None:
        for table in ("baselines", "evaluations"):
            self.db.execute(
                f"DELETE FROM {table} WHERE run = ? AND problem_id = ? AND sample_index = ?",
                (run_name, problem_id, sample_index),
            )

    # --- reading ----------------------------------------------------------
    def run(self, name: str) -> RunRecord | None:
        row = self.db.execute("SELECT name, created_at, config FROM runs WHERE name = ?", (name,)).fetchone()
        if row is None:
            return None
        return RunRecord(name=row[0], created_at=row[1], config=RunConfig.from_dict(json.loads(row[2])))

    def run_names(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT name FROM runs ORDER BY created_at, name")]

    def sessions(self, run_name: str) -> list[SessionRecord]:
        rows = self.db.execute(
            "SELECT number, started_at, manifest FROM sessions WHERE run = ? ORDER BY number", (run_name,)
        )
        return [SessionRecord(n, started, Manifest.from_dict(json.loads(m))) for n, started, m in rows]

    def problems(self, run_name: str) -> list[ProblemRecord]:
        rows = self.db.execute(
            "SELECT problem_id, position, level, name, path, sha256, source FROM problems "
            "WHERE run = ? ORDER BY position",
            (run_name,),
        )
        return [ProblemRecord(*row) for row in rows]

    def samples(self, run_name: str) -> list[SampleRecord]:
        rows = self.db.execute(
            "SELECT s.problem_id, s.sample_index, s.name, s.origin, s.sha256, s.source "
            "FROM samples s JOIN problems p ON p.run = s.run AND p.problem_id = s.problem_id "
            "WHERE s.run = ? ORDER BY p.position, s.sample_index",
            (run_name,),
        )
        return [SampleRecord(*row) for row in rows]

    def evaluations(self, run_name: str) -> list[EvaluationRecord]:
        return self._read_evaluations(run_name)

    def superseded(self, run_name: str) -> list[EvaluationRecord]:
        """The verdicts re-judging replaced, oldest first within each sample (each with its own
        session; the one that replaced it is the next record's, or the current verdict's)."""
        rows = self.db.execute(
            "SELECT s.record FROM superseded s JOIN problems p ON p.run = s.run AND p.problem_id = s.problem_id "
            "WHERE s.run = ? ORDER BY p.position, s.sample_index, s.rowid",
            (run_name,),
        )
        return [EvaluationRecord(**json.loads(record)) for (record,) in rows]

    def _read_evaluations(self, run_name: str, where: str = "", params: tuple = ()) -> list[EvaluationRecord]:
        columns: dict[tuple[str, int], tuple[dict, dict]] = {}
        for problem_id, index, baseline, runtime_ms, speedup in self.db.execute(
            "SELECT problem_id, sample_index, baseline, runtime_ms, speedup FROM baselines e WHERE run = ? " + where,
            (run_name, *params),
        ):
            baselines, speedups = columns.setdefault((problem_id, index), ({}, {}))
            baselines[baseline], speedups[baseline] = runtime_ms, speedup
        rows = self.db.execute(
            "SELECT e.problem_id, e.sample_index, e.status, e.correct, e.reason, e.runtime_ms, e.verdict, "
            "e.session, e.started_at, e.finished_at, e.turn FROM evaluations e "
            "JOIN problems p ON p.run = e.run AND p.problem_id = e.problem_id "
            f"WHERE e.run = ? {where} ORDER BY p.position, e.sample_index",
            (run_name, *params),
        )
        records = []
        for problem_id, index, status, correct, reason, runtime_ms, verdict, session, started, finished, turn in rows:
            baselines, speedups = columns.get((problem_id, index), ({}, {}))
            records.append(
                EvaluationRecord(
                    problem_id=problem_id,
                    sample_index=index,
                    status=status,
                    correct=bool(correct),
                    reason=reason,
                    runtime_ms=runtime_ms,
                    baselines=baselines,
                    speedup=speedups,
                    verdict=None if verdict is None else json.loads(verdict),
                    session=session,
                    started_at=started,
                    finished_at=finished,
                    turn=turn,
                )
            )
        return records

    def turns(self, run_name: str) -> list[TurnRecord]:
        rows = self.db.execute(
            "SELECT t.problem_id, t.sample_index, t.turn, t.session, t.prompt, t.prompt_record, t.reply, "
            "t.extraction, t.source, t.sha256, t.generation, t.input_tokens, t.output_tokens, t.cost_usd, "
            "t.generated_at, t.status, t.correct, t.reason, t.runtime_ms, t.speedup, t.verdict, t.evaluated_at "
            "FROM turns t JOIN problems p ON p.run = t.run AND p.problem_id = t.problem_id "
            "WHERE t.run = ? ORDER BY p.position, t.sample_index, t.turn",
            (run_name,),
        )
        records = []
        for row in rows:
            (problem_id, index, turn, session, prompt, prompt_record, reply, extraction, source, sha256, generation,
             input_tokens, output_tokens, cost_usd, generated_at, status, correct, reason, runtime_ms, speedup,
             verdict, evaluated_at) = row
            records.append(
                TurnRecord(
                    problem_id=problem_id,
                    sample_index=index,
                    turn=turn,
                    session=session,
                    prompt=prompt,
                    prompt_record=json.loads(prompt_record),
                    reply=reply,
                    extraction=None if extraction is None else json.loads(extraction),
                    source=source,
                    sha256=sha256,
                    generation=json.loads(generation),
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    cost_usd=cost_usd,
                    generated_at=generated_at,
                    status=status,
                    correct=bool(correct),
                    reason=reason,
                    runtime_ms=runtime_ms,
                    speedup=json.loads(speedup),
                    verdict=None if verdict is None else json.loads(verdict),
                    evaluated_at=evaluated_at,
                )
            )
        return records

    def load(self, run_name: str) -> RunData:
        run = self.run(run_name)
        if run is None:
            known = ", ".join(self.run_names()) or "none"
            raise StoreError(f"no run named {run_name!r} in {self.path} (runs: {known})")
        return RunData(
            run=run,
            sessions=self.sessions(run_name),
            problems=self.problems(run_name),
            samples=self.samples(run_name),
            evaluations=self.evaluations(run_name),
            turns=self.turns(run_name),
            superseded=self.superseded(run_name),
        )


SQLITE_INTEGER = range(-(2**63), 2**63)


def _row(*values: Any) -> tuple[Any, ...]:
    """A row's values as SQLite takes them whatever reached them: text made encodable (a lone
    surrogate in a candidate's exception message stopped ``kbench run`` at its store write,
    and at every resume after), an integer past SQLite's 64 bits (an agent's own token count)
    as no value rather than an OverflowError. What the judge and the runner write is never changed."""
    return tuple(None if isinstance(v, int) and not isinstance(v, bool) and v not in SQLITE_INTEGER
                 else encodable(v) for v in values)


def _dumps(obj: Any) -> str:
    """JSON that Python reads back exactly (NaN and infinities included)."""
    return json.dumps(obj, default=str)
