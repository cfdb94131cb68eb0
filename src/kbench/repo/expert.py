"""The expert patch's speedup over the base revision, measured once and cached.

A patch's score is a fraction of what the task's expert patch achieves on the
same GPU under the same software, so the expert's speedup is measured by the
very path a candidate's patch takes (kbench.repo.patch_judge.evaluate_patch:
its tests, then the workload interleaved with the base revision) and kept in
an SQLite file beside the build cache, keyed like the baseline columns
(kbench.judge.baselines): the task's hash, the size, the GPU, its driver, the
Python, PyTorch, CUDA and Triton versions, the pinned settings and the timing
protocol. A lookup under another environment misses, and the entries found
for the task under other environments are named in what the verdict records.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from kbench.core.verdict import Verdict
from kbench.judge import state
from kbench.judge.baselines import Environment, driver_version
from kbench.judge.devices import cache_dir
from kbench.judge.timing import TimingSettings

# The share of the expert's speedup a patch must reach, on its interval's lower bound, to solve a task (GSO's rule).
SOLVED_FRACTION = 0.95
PROTOCOL_VERSION = 1


def default_expert_cache() -> Path:
    return cache_dir() / "repo_experts.sqlite"


@dataclass(frozen=True)
class ExpertMeasurement:
    """The expert patch's speedup over the base revision, as measured once under an environment."""

    key: str
    task_sha256: str
    size: str
    speedup: float
    speedup_interval: list[float]
    environment: dict[str, Any]
    measured_at: str


def environment_of(verdict: Verdict, timing: TimingSettings) -> Environment:
    """The environment a verdict was measured under (what the reference worker reported)."""
    return Environment(device_name=verdict.device_name,
                       driver=driver_version() if verdict.device.startswith("cuda") else None,
                       versions=verdict.versions, settings=verdict.settings, timing=asdict(timing))


def expert_key(task_sha256: str, size: str, environment: Environment) -> str:
    material = {"protocol": PROTOCOL_VERSION, "task": task_sha256, "size": size,
                "environment": asdict(environment), "pinned": state.PINNED}
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


class ExpertCache:
    """Measured expert speedups in one SQLite file."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS experts (
        key TEXT PRIMARY KEY,
        task_sha256 TEXT NOT NULL,
        size TEXT NOT NULL,
        speedup REAL NOT NULL,
        speedup_interval TEXT NOT NULL,
        environment TEXT NOT NULL,
        measured_at TEXT NOT NULL
    );
    """

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30)
        self._db.executescript(self.SCHEMA)

    def __enter__(self) -> "ExpertCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self._db.close()

    def lookup(self, task_sha256: str, size: str, environment: Environment
               ) -> tuple[ExpertMeasurement | None, list[str]]:
        """The entry measured under exactly this environment, and a line for each other one."""
        key = expert_key(task_sha256, size, environment)
        hit, not_used = None, []
        for row in self._db.execute("SELECT * FROM experts WHERE task_sha256 = ? AND size = ?", (task_sha256, size)):
            entry = ExpertMeasurement(row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]), row[6])
            if entry.key == key:
                hit = entry
            else:
                other = Environment(**entry.environment).describe()
                not_used.append(f"not used: measured {entry.measured_at} under another environment ({other})")
        return hit, not_used

    def put(self, entry: ExpertMeasurement) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO experts VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (entry.key, entry.task_sha256, entry.size, entry.speedup,
                              json.dumps(entry.speedup_interval), json.dumps(entry.environment), entry.measured_at))


def measurement(task_sha256: str, expert: Verdict, timing: TimingSettings) -> ExpertMeasurement:
    """The cache entry for a correct verdict on the expert patch."""
    environment = environment_of(expert, timing)
    return ExpertMeasurement(expert_key(task_sha256, expert.size, environment), task_sha256, expert.size,
                             float(expert.speedup["base"]), list(expert.speedup_interval.get("base") or []),
                             asdict(environment), datetime.now(timezone.utc).isoformat(timespec="seconds"))


def store(cache: Path, entry: ExpertMeasurement) -> str | None:
    """Put ``entry`` into the cache at ``cache``; a note when it could not be written."""
    try:
        with ExpertCache(cache) as kept:
            kept.put(entry)
    except (OSError, sqlite3.Error) as exc:
        return f"expert cache {cache} not written: {exc}"
    return None


def expert_record(task_sha256: str, candidate: Verdict, timing: TimingSettings, cache: Path | None,
                  measure: Callable[[], Verdict], own: bool = False) -> dict[str, Any]:
    """The verdict's ``expert`` field: the expert's speedup under the candidate's environment
    (from ``cache``, else measured now by ``measure``, the expert patch judged the same way;
    ``own``: the candidate is the expert patch, whose speedup is its own), the candidate's
    fraction of it with its interval, and whether that solves the task."""
    notes: list[str] = []
    found = None
    if cache is not None:
        try:
            with ExpertCache(cache) as kept:
                found, notes = kept.lookup(task_sha256, candidate.size, environment_of(candidate, timing))
        except (OSError, sqlite3.Error) as exc:  # an unreadable cache: measure, and say so
            notes, cache = [f"expert cache {cache} not read: {exc}"], None
    how = "cached"
    if found is None:
        expert = candidate if own else measure()
        if not expert.correct or expert.speedup.get("base") is None:
            said = expert.reason.strip().splitlines()[0] if expert.reason.strip() else ""
            return {"speedup": None, "fraction": None, "fraction_interval": None, "solved": False,
                    "measured": f"the expert patch was not correct here: {expert.status}: {said}"}
        found = measurement(task_sha256, expert, timing)
        how = "this evaluation (the expert patch itself)" if own else "measured now"
        note = store(cache, found) if cache is not None else None
        notes += [note] if note else []
    speedup = candidate.speedup["base"]
    interval = candidate.speedup_interval.get("base") or [speedup, speedup]
    fraction_interval = [interval[0] / found.speedup, interval[1] / found.speedup]
    return {
        "speedup": found.speedup,
        "speedup_interval": found.speedup_interval,
        "fraction": speedup / found.speedup,
        "fraction_interval": fraction_interval,
        "solved": fraction_interval[0] >= SOLVED_FRACTION,
        "measured": f"{how}: {found.measured_at}, {candidate.device_name or candidate.device}, size {found.size}",
        **({"notes": notes} if notes else {}),
    }


def solved(verdict: Verdict) -> bool:
    """A task is solved by a correct patch whose speedup interval's lower bound reaches
    ``SOLVED_FRACTION`` of the expert's speedup (GSO's rule, on the interval)."""
    if not verdict.correct or not verdict.expert.get("speedup"):
        return False
    interval = verdict.speedup_interval.get("base")
    low = interval[0] if interval else verdict.speedup.get("base")
    return low is not None and low >= SOLVED_FRACTION * verdict.expert["speedup"]
