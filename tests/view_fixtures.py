"""Small stores of hand-made runs for the tests of ``kbench runs``, ``show`` and ``report``:
nothing is judged, so building one takes milliseconds."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from run_fixtures import config, make_verdict, run_data

from kbench.core.verdict import Trial
from kbench.runs.manifest import Manifest
from kbench.runs.records import EvaluationRecord, RunData, RunRecord, SessionRecord, TurnRecord
from kbench.runs.store import Store

# Problems of the replayed run "base": (id, level, samples) as run_fixtures.run_data takes them.
BASE = [
    ("level1/relu", 1, [("correct", 1.5)]),
    ("level1/gelu", 1, [("incorrect", None)]),
    ("level1/softmax", 1, [("correct", 0.8), ("compile_error", None)]),
    ("level1/matmul", 1, None),
    ("level2/conv_bias", 2, [("correct", 2.5)]),
    ("level2/gemm_relu", 2, ["pending"]),
]
# The same problems judged again: gelu fixed, relu broken, conv_bias faster.
NEXT = [
    ("level1/relu", 1, [("runtime_error", None)]),
    ("level1/gelu", 1, [("correct", 1.1)]),
    ("level1/softmax", 1, [("correct", 0.9), ("compile_error", None)]),
    ("level1/matmul", 1, None),
    ("level2/conv_bias", 2, [("correct", 3.0)]),
    ("level2/gemm_relu", 2, [("correct", 1.2)]),
]
GELU_REASON = "incorrect: values differ at trial 0\n  max abs error 0.5 at index (3, 1)"
GELU_TAIL = "compiling kernel...\nwarning: something odd on line 12\n"
# relu's correct sample is timed: (min, p25, median, p75, max) per call in ms, and each round's median.
RELU_TIMING = {"candidate": ((0.38, 0.40, 0.41, 0.43, 0.52), (0.41, 0.405, 0.415)),
               "eager": ((0.58, 0.60, 0.615, 0.63, 0.9), (0.61, 0.62, 0.615))}


def solution_source(problem_id: str, index: int) -> str:
    return f"# sample {index} for {problem_id}\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"


def _timing(column: str) -> dict:
    (low, p25, median, p75, high), rounds = RELU_TIMING[column]
    return {"clock": "cuda-event", "min_ms": low, "p25_ms": p25, "median_ms": median, "p75_ms": p75, "max_ms": high,
            "mean_ms": median, "stdev_ms": 0.02, "count": 300, "rel_error": 0.004, "stop_reason": "3 rounds",
            "rounds": list(rounds)}


def _detailed(data: RunData) -> RunData:
    """gelu's verdict with a multi-line reason, trials and an output tail, relu's with its timings, as a
    judge writes them; each sample with a source."""
    evaluations = []
    for record in data.evaluations:
        if record.problem_id == "level1/relu" and record.status == "correct":
            verdict = make_verdict("level1/relu", "correct", 1.5)
            verdict.trials = [Trial(i, True, "ok", "all outputs match", 0.0, 0.0) for i in range(5)]
            verdict.timing = _timing("candidate")
            verdict.runtime_ms = verdict.timing["median_ms"]
            verdict.baselines = {"eager": {"runtime_ms": 0.615, "timing": _timing("eager"), "source": "measured"}}
            verdict.speedup, verdict.speedup_interval = {"eager": 1.5}, {"eager": [1.42, 1.58]}
            record = EvaluationRecord.from_verdict(verdict, "level1/relu", 0)
        if record.problem_id == "level1/gelu" and record.status == "incorrect":
            verdict = make_verdict("level1/gelu", "incorrect")
            verdict.reason, verdict.output_tail, verdict.output_bytes = GELU_REASON, GELU_TAIL, len(GELU_TAIL)
            verdict.trials = [Trial(0, False, "values", "max abs error 0.5", 0.5, 0.25)]
            verdict.max_abs_error, verdict.max_rel_error = 0.5, 0.25
            record = EvaluationRecord.from_verdict(verdict, "level1/gelu", 0)
        evaluations.append(record)
    samples = [replace(s, source=(source := solution_source(s.problem_id, s.index)),
                       sha256=hashlib.sha256(source.encode()).hexdigest()) for s in data.samples]
    problems = [replace(p, sha256=hashlib.sha256(p.sha256.encode()).hexdigest()) for p in data.problems]
    return replace(data, evaluations=evaluations, samples=samples, problems=problems)


def generated_run() -> RunData:
    """A run that asked a model, two turns for its one problem: incorrect, then correct."""
    cfg = config(source="openai", solutions="openai/test-model", turns=2)
    data = run_data([("level1/relu", 1, [("correct", 1.7)])], name="gen")
    turns = [
        TurnRecord("level1/relu", 0, 1, 1, "Write a kernel for ReLU", {"template": "one-shot"}, "```python\nbad\n```",
                   None, "bad", "b" * 64, {"model": "test-model"}, 100, 50, 0.001, "2026-11-30T10:00:00+00:00",
                   "incorrect", False, "incorrect: shape (2,) != (3,)"),
        TurnRecord("level1/relu", 0, 2, 1, "This is turn 2: fix it", {"template": "refine"}, "```python\ngood\n```",
                   None, "good", "g" * 64, {"model": "test-model"}, 120, 60, 0.0012, "2026-11-30T10:01:00+00:00",
                   "correct", True, "correct", 0.5, {"eager": 1.7}),
    ]
    evaluations = [replace(e, turn=2) for e in data.evaluations]
    return replace(data, run=RunRecord("gen", "2026-11-30T10:00:00+00:00", cfg),
                   sessions=[SessionRecord(1, "", Manifest(config=cfg, captured_at="2026-11-30T10:00:00+00:00"))],
                   evaluations=evaluations, turns=turns)


def save(store: Store, data: RunData) -> None:
    """Write a hand-made run into a store as ``kbench run`` would have."""
    store.create_run(data.run, data.problems, data.samples, data.sessions[0].manifest)
    for evaluation in data.evaluations:
        store.record(data.run.name, evaluation)
    for turn in data.turns:
        store.record_turn(data.run.name, turn)


def base_run(name: str = "base", spec: list = BASE, created_at: str = "2026-11-29T12:00:00+00:00") -> RunData:
    data = _detailed(run_data(spec, name=name))
    manifest = Manifest(config=data.run.config, captured_at=created_at, command=("kbench", "run", "--run", name),
                        kbench_version="0.1.0", git_revision="abcdef1234567890", cpu="Test CPU", torch="2.13.0")
    return replace(data, run=replace(data.run, created_at=created_at),
                   sessions=[SessionRecord(1, created_at, manifest)])


def make_store(path: Path) -> Path:
    """A store with the replayed runs ``base`` and ``next`` and the generated run ``gen``."""
    with Store(path) as store:
        save(store, base_run())
        save(store, base_run("next", NEXT, "2026-11-30T09:00:00+00:00"))
        save(store, generated_run())
    return path
