"""The service's job store: every accepted job, its state and, once judged, its verdict and reward,
in one SQLite file.

A job is committed (a synchronous write, as kbench.runs.store commits evaluations) before its id is
given to the client, so that killing the service at any moment loses no accepted job: on restart
the jobs that were running are queued again (their evaluations died with the process) and the
queued ones are judged in the order they came. A job is ``queued``, ``running`` or ``done``; a done
job holds a status (the verdict's, or ``infra_error``/``problem_error`` where no verdict came), the
verdict's JSON where there is one, and the reward's JSON. Not a run store (kbench.runs.store): a
service's jobs have no fixed set of problems or samples, and a run's manifest pins what a service
lets each request choose (the reward's shape and baseline); the durability rules are the same.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from kbench.core.verdict import encodable

APPLICATION_ID = 0x6B627376  # "kbsv": marks the file as a kbench service's job store
SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    submitted_at TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),
    problem TEXT NOT NULL,
    problem_source TEXT,
    source TEXT NOT NULL,
    solution_sha256 TEXT NOT NULL,
    shape TEXT NOT NULL,
    baseline TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    started_at TEXT,
    finished_at TEXT,
    status TEXT,
    verdict TEXT,
    reward TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, seq)
"""
BUSY_TIMEOUT_SECONDS = 60
STATES = ("queued", "running", "done")


class JobStoreError(Exception):
    """A file that is not a kbench service's job store, or one written by a newer kbench."""


class Busy(Exception):
    """The queue is full: the jobs were not accepted (HTTP 503)."""


@dataclass(frozen=True)
class NewJob:
    """A job as a request asks for it, checked (kbench.serve.payload)."""

    problem: str  # a suite id, or "inline/<sha256 prefix>" for a problem given as text
    source: str
    shape: str
    baseline: str
    problem_source: str | None = None
    solution_sha256: str = ""


@dataclass(frozen=True)
class Job:
    """A job as stored."""

    id: str
    submitted_at: str
    state: str
    problem: str
    problem_source: str | None
    source: str
    solution_sha256: str
    shape: str
    baseline: str
    attempts: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    status: str | None = None
    verdict: dict[str, Any] | None = None
    reward: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        """What a client sees (the sources it sent are not sent back)."""
        return {"id": self.id, "state": self.state, "problem": self.problem, "shape": self.shape,
                "baseline": self.baseline, "solution_sha256": self.solution_sha256, "submitted_at": self.submitted_at,
                "started_at": self.started_at, "finished_at": self.finished_at, "attempts": self.attempts,
                "status": self.status, "reward": self.reward, "verdict": self.verdict}


COLUMNS = ("id", "submitted_at", "state", "problem", "problem_source", "source", "solution_sha256", "shape",
           "baseline", "attempts", "started_at", "finished_at", "status", "verdict", "reward")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class JobStore:
    """The jobs file at ``path``. Safe to use from many threads (one connection, one lock)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, check_same_thread=False,
                                      isolation_level=None)
            self.db.execute("PRAGMA synchronous = FULL")
            self.db.execute("PRAGMA journal_mode = WAL")
            self._create()
        except sqlite3.DatabaseError as exc:
            raise JobStoreError(f"{self.path}: not a usable job store ({exc})") from exc

    def _create(self) -> None:
        app_id, version, tables = self.db.execute(
            "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), "
            "(SELECT count(*) FROM sqlite_master)").fetchone()
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
            raise JobStoreError(f"{self.path} is an SQLite file, but not a kbench service's job store")
        if version > SCHEMA_VERSION:
            raise JobStoreError(f"{self.path} has job-store version {version}; this kbench reads up to {SCHEMA_VERSION}")
        with self._transaction():
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def _transaction(self):
        store = self

        class Transaction:
            def __enter__(self) -> None:
                store._lock.acquire()
                store.db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind: Any, *rest: Any) -> None:
                try:
                    store.db.execute("ROLLBACK" if kind else "COMMIT")
                finally:
                    store._lock.release()

        return Transaction()

    # --- writing ----------------------------------------------------------
    def add(self, jobs: list[NewJob], max_pending: int) -> list[str]:
        """Commit ``jobs`` (all or none) and return their ids; Busy where the jobs not yet done would
        then be more than ``max_pending``."""
        with self._transaction():
            (pending,) = self.db.execute("SELECT count(*) FROM jobs WHERE state != 'done'").fetchone()
            if pending + len(jobs) > max_pending:
                raise Busy(f"{pending} jobs are waiting or running, at most {max_pending}; try again later")
            ids, submitted = [uuid.uuid4().hex for _ in jobs], now()
            self.db.executemany(
                "INSERT INTO jobs (id, submitted_at, state, problem, problem_source, source, solution_sha256, shape, "
                "baseline) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?)",
                [(i, submitted, j.problem, j.problem_source, encodable(j.source), j.solution_sha256, j.shape, j.baseline)
                 for i, j in zip(ids, jobs)])
        return ids

    def claim(self) -> Job | None:
        """The oldest queued job, now marked running (its attempts counted); None when none waits."""
        with self._transaction():
            row = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs WHERE state = 'queued' ORDER BY seq LIMIT 1"
                                  ).fetchone()
            if row is None:
                return None
            started = now()
            self.db.execute("UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = ? WHERE id = ?",
                            (started, row[0]))
        job = _job(row)
        return Job(**{**job.__dict__, "state": "running", "attempts": job.attempts + 1, "started_at": started})

    def finish(self, job_id: str, status: str, verdict_json: str | None, reward: dict[str, Any]) -> None:
        """A job's outcome, committed now."""
        with self._transaction():
            self.db.execute("UPDATE jobs SET state = 'done', finished_at = ?, status = ?, verdict = ?, reward = ? "
                            "WHERE id = ?", (now(), status, verdict_json, json.dumps(reward), job_id))

    def requeue_running(self, max_attempts: int) -> tuple[int, list[Job]]:
        """After a restart: the jobs left running died with the process; each is queued again, unless it has
        been started ``max_attempts`` times (a candidate that takes the service down with it): those are
        returned for the caller to finish as infrastructure failures. Returns (queued again, given up)."""
        with self._transaction():
            given_up = [_job(r) for r in self.db.execute(
                f"SELECT {', '.join(COLUMNS)} FROM jobs WHERE state = 'running' AND attempts >= ?", (max_attempts,))]
            requeued = self.db.execute("UPDATE jobs SET state = 'queued' WHERE state = 'running' AND attempts < ?",
                                       (max_attempts,)).rowcount
        return requeued, given_up

    # --- reading ----------------------------------------------------------
    def get(self, job_id: str) -> Job | None:
        with self._lock:
            row = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else _job(row)

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self.db.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall()
        return {state: 0 for state in STATES} | dict(rows)

    def all(self) -> Iterator[Job]:
        with self._lock:
            rows = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs ORDER BY seq").fetchall()
        return (_job(r) for r in rows)


def _job(row: tuple) -> Job:
    values = dict(zip(COLUMNS, row))
    for name in ("verdict", "reward"):
        if values[name] is not None:
            values[name] = json.loads(values[name])
    return Job(**values)
