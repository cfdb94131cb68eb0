"""The store's schema: its version and the migrations that build or upgrade it (kbench.runs.store).

Schema 1 holds runs, sessions, problems, samples, evaluations and baselines;
schema 2 adds the turns of runs that ask models; schema 3 the verdicts a
re-judging replaced (``superseded``); schema 4 each run's track (``runs.track``:
``kernel`` or ``repo``, also in its config), so that a kbench that knows one track
refuses a store that may hold the other rather than scoring a repository run as kernels.
"""

from __future__ import annotations

SCHEMA_VERSION = 4

# MIGRATIONS[v] turns a store of schema v - 1 into one of schema v: statements separated
# by semicolons (never one inside a statement).
MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE runs (
        name TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        config TEXT NOT NULL
    );
    CREATE TABLE sessions (
        run TEXT NOT NULL REFERENCES runs(name),
        number INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        manifest TEXT NOT NULL,
        PRIMARY KEY (run, number)
    );
    CREATE TABLE problems (
        run TEXT NOT NULL REFERENCES runs(name),
        problem_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        level INTEGER,
        name TEXT NOT NULL,
        path TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        source TEXT NOT NULL,
        PRIMARY KEY (run, problem_id)
    );
    CREATE TABLE samples (
        run TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        name TEXT NOT NULL,
        origin TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        source TEXT NOT NULL,
        PRIMARY KEY (run, problem_id, sample_index),
        FOREIGN KEY (run, problem_id) REFERENCES problems(run, problem_id)
    );
    CREATE TABLE evaluations (
        run TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        session INTEGER NOT NULL,
        status TEXT NOT NULL,
        correct INTEGER NOT NULL,
        reason TEXT NOT NULL,
        runtime_ms REAL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        verdict TEXT,
        PRIMARY KEY (run, problem_id, sample_index),
        FOREIGN KEY (run, problem_id) REFERENCES problems(run, problem_id)
    );
    CREATE TABLE baselines (
        run TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        baseline TEXT NOT NULL,
        runtime_ms REAL,
        speedup REAL,
        PRIMARY KEY (run, problem_id, sample_index, baseline),
        FOREIGN KEY (run, problem_id, sample_index) REFERENCES evaluations(run, problem_id, sample_index)
    );
    """,
    2: """
    CREATE TABLE turns (
        run TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        turn INTEGER NOT NULL,
        session INTEGER NOT NULL,
        prompt TEXT NOT NULL,
        prompt_record TEXT NOT NULL,
        reply TEXT,
        extraction TEXT,
        source TEXT,
        sha256 TEXT,
        generation TEXT NOT NULL,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd REAL,
        generated_at TEXT NOT NULL,
        status TEXT,
        correct INTEGER NOT NULL DEFAULT 0,
        reason TEXT NOT NULL DEFAULT '',
        runtime_ms REAL,
        speedup TEXT NOT NULL DEFAULT '{}',
        verdict TEXT,
        evaluated_at TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (run, problem_id, sample_index, turn),
        FOREIGN KEY (run, problem_id) REFERENCES problems(run, problem_id)
    );
    ALTER TABLE evaluations ADD COLUMN turn INTEGER
    """,
    3: """
    CREATE TABLE superseded (
        run TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        superseded_in INTEGER NOT NULL,
        record TEXT NOT NULL,
        FOREIGN KEY (run, problem_id) REFERENCES problems(run, problem_id)
    )
    """,
    4: """
    ALTER TABLE runs ADD COLUMN track TEXT NOT NULL DEFAULT 'kernel'
    """,
}
