"""Baseline columns (what a candidate's time is compared with) and the cache of measured ones.

A column is a way of running the problem's own ``Model``: eager PyTorch, or one
of ``torch.compile``'s settings. Each is timed by the judge's protocol in a
reference worker of its own (no candidate code in it; a compiled column never
shares dynamo's caches with another), interleaved in time with the candidate
(docs/timing.md).

Compiled columns cost a compilation (minutes for max-autotune), so a measured
one is cached, keyed by everything that changes it: the problem's content,
size and dtype, the column, the GPU, its driver, the CUDA, PyTorch, Triton and
Python versions, the pinned settings and the protocol. A lookup under another
environment misses, and says what was there and why it was not used.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from kbench.judge.protocol import state
from kbench.judge.processes.devices import cache_dir

# Column name -> the torch.compile arguments; eager has none.
COLUMNS: dict[str, dict[str, str] | None] = {
    "eager": None,
    "compile": {"mode": "default"},
    "compile-max-autotune": {"mode": "max-autotune"},
    "compile-max-autotune-no-cudagraphs": {"mode": "max-autotune-no-cudagraphs"},
    "compile-reduce-overhead": {"mode": "reduce-overhead"},
    "cudagraphs": {"backend": "cudagraphs"},
}
# Columns that replay CUDA graphs themselves: CUDA-graph timing does not capture them again, it only
# gives them fixed input buffers (graphs.StaticInputs).
GRAPHED_COLUMNS = frozenset({"compile-max-autotune", "compile-reduce-overhead", "cudagraphs"})
CUDA_ONLY = {"compile-reduce-overhead", "cudagraphs"}  # CUDA graphs: nothing to capture on a CPU
# Bumped when the way a column is measured changes, so that old cache entries stop matching
# (2: graphed columns under CUDA-graph timing read fixed inputs).
PROTOCOL_VERSION = 2


def check_columns(names: list[str] | tuple[str, ...], device: str = "cuda") -> tuple[str, ...]:
    """The columns asked for, in order, eager always first; ValueError for an unknown one."""
    unknown = [n for n in names if n not in COLUMNS]
    if unknown:
        raise ValueError(f"unknown baseline {', '.join(unknown)}; choose from {', '.join(COLUMNS)}")
    if not device.startswith("cuda"):
        cuda_only = [n for n in names if n in CUDA_ONLY]
        if cuda_only:
            raise ValueError(f"baseline {', '.join(cuda_only)} needs a CUDA device")
    return tuple(dict.fromkeys(["eager", *names]))


def describe(column: str) -> dict[str, Any]:
    """How a column is run, for manifests and verdicts."""
    arguments = COLUMNS[column]
    if arguments is None:
        return {"kind": "eager", "timed_in": "a reference worker, interleaved with the candidate"}
    return {"kind": "torch.compile", **arguments, "timed_in": "a reference worker of its own, interleaved"}


def prepare(model: Any, column: str) -> Callable[..., Any]:
    """The callable a reference worker times for ``column`` (in the worker)."""
    arguments = COLUMNS[column]
    if arguments is None:
        return model
    import torch

    return torch.compile(model, **arguments)


@dataclass(frozen=True)
class Environment:
    """What a measured baseline depends on besides the problem and the column."""

    device_name: str | None
    driver: str | None
    versions: dict[str, Any]
    settings: dict[str, Any]
    timing: dict[str, Any]

    def describe(self) -> str:
        v = self.versions
        return (f"{self.device_name}, driver {self.driver}, torch {v.get('torch')}, CUDA {v.get('cuda')}, "
                f"Triton {v.get('triton')}, Python {v.get('python')}")


@dataclass(frozen=True)
class CachedBaseline:
    key: str
    problem_sha256: str
    size: str
    dtype: str
    column: str
    runtime_ms: float
    eager_ms: float  # eager, timed in the same rounds: the column's speed relative to eager
    timing: dict[str, Any]
    environment: dict[str, Any]
    measured_at: str


def cache_key(problem_sha256: str, size: str, dtype: str, column: str, env: Environment,
              sizes: dict[str, Any] | None = None) -> str:
    """The entry's key. ``sizes``: the size constants the problem ran with, given for
    dtypes other than float32, where the same file runs at its dtype variant's sizes
    (KBENCH_DTYPE_SIZES) or as written (KernelBench's precision cast, kbench.suite.kernelbench)."""
    material = {
        "protocol": PROTOCOL_VERSION,
        "problem": problem_sha256,
        "size": size,
        "dtype": dtype,
        "column": column,
        "arguments": COLUMNS[column],
        "environment": asdict(env),
        "pinned": state.PINNED,
    }
    if sizes is not None:
        material["sizes"] = sizes
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


class BaselineCache:
    """Measured baseline columns in one SQLite file (by default beside the build cache)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS baselines (
        key TEXT PRIMARY KEY,
        problem_sha256 TEXT NOT NULL,
        size TEXT NOT NULL,
        dtype TEXT NOT NULL,
        column_name TEXT NOT NULL,
        runtime_ms REAL NOT NULL,
        eager_ms REAL NOT NULL,
        timing TEXT NOT NULL,
        environment TEXT NOT NULL,
        measured_at TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS baselines_problem ON baselines (problem_sha256, size, dtype, column_name);
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30)
        self._db.executescript(self.SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "BaselineCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lookup(self, problem_sha256: str, size: str, dtype: str, column: str, env: Environment,
               sizes: dict[str, Any] | None = None) -> tuple[CachedBaseline | None, list[str]]:
        """The entry measured under exactly this environment, and a line for each
        entry of the same problem and column that was not used (another environment)."""
        key = cache_key(problem_sha256, size, dtype, column, env, sizes)
        rows = self._db.execute(
            "SELECT * FROM baselines WHERE problem_sha256 = ? AND size = ? AND dtype = ? AND column_name = ?",
            (problem_sha256, size, dtype, column),
        ).fetchall()
        hit, not_used = None, []
        for row in rows:
            entry = _entry(row)
            if entry.key == key:
                hit = entry
            else:
                other = Environment(**entry.environment)
                not_used.append(f"not used: measured {entry.measured_at} under another environment ({other.describe()})")
        return hit, not_used

    def put(self, entry: CachedBaseline) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO baselines VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.key, entry.problem_sha256, entry.size, entry.dtype, entry.column, entry.runtime_ms,
                 entry.eager_ms, json.dumps(entry.timing), json.dumps(entry.environment), entry.measured_at),
            )


def _entry(row: tuple) -> CachedBaseline:
    key, sha, size, dtype, column, runtime_ms, eager_ms, timing, environment, measured_at = row
    return CachedBaseline(key, sha, size, dtype, column, runtime_ms, eager_ms, json.loads(timing),
                          json.loads(environment), measured_at)


def driver_version() -> str | None:
    """The NVIDIA driver's version, from the kernel module (no subprocess)."""
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    for word in text.split():
        if word.count(".") >= 1 and word.replace(".", "").isdigit():
            return word
    return None


def default_cache_path() -> Path:
    return cache_dir() / "baselines.sqlite"
