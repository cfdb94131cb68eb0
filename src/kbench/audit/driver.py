"""Auditing problems: each in a throw-away reference worker, several at a time.

``audit_problem`` runs one problem in a fresh reference worker (the same
process the judge uses, so a broken or hanging problem becomes the flag
``broken`` instead of stopping the audit); the worker takes the measurements
(kbench.judge.trusted.problem_checks) and ``rules`` decides, in this process, which
flags apply.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from kbench.audit.rules import flags_from_facts
from kbench.judge.processes.devices import worker_env
from kbench.judge.trusted.problem_checks import INIT_SEED, INPUT_SEEDS
from kbench.judge.processes.process import Worker, WorkerLost, default_memory_limit
from kbench.judge.trusted.reference import load_message, reference_failure
from kbench.judge.protocol.timing import TimingSettings
from kbench.suite.problem import Problem, ProblemError, check_runnable

DEFAULT_TIMEOUT = 300.0  # seconds per problem: load, checks and timing
# How an allocation that does not fit shows up: PyTorch's CPU and CUDA
# allocators, and the judge's host memory limit (process.Worker).
MEMORY_ERRORS = ("out of memory", "OutOfMemoryError", "can't allocate memory", "host memory limit exceeded")


def audit_message(problem: Problem, device: str, timing: TimingSettings) -> dict[str, Any]:
    return {
        "op": "audit",
        "seeds": list(INPUT_SEEDS),
        "init_seed": INIT_SEED,
        "tolerance": problem.tolerance,
        "time": device.startswith("cuda"),
        "timing": asdict(timing),
        "budget_seconds": timing.budget_seconds,
        "host_memory_bytes": default_memory_limit(),
    }


def base_record(path: Path, problem_id: str, device: str, size: str, dtype: str = "float32") -> dict[str, Any]:
    return {
        "id": problem_id,
        "path": str(path),
        "device": device,
        "size": size,
        "dtype": dtype,
        "skipped": None,
        "flags": [],
        "reasons": {},
        "notes": [],
    }


def broken_record(path: Path, problem_id: str, device: str, size: str, reason: str) -> dict[str, Any]:
    """A problem that could not be audited at all (e.g. its file does not parse)."""
    record = base_record(path, problem_id, device, size)
    record.update(flags=["broken"], reasons={"broken": reason})
    return record


def audit_problem(
    problem: Problem,
    device: str,
    size: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    timing: TimingSettings = TimingSettings(),
    dtype: str = "float32",
    threads: int | None = None,
    device_turn: contextlib.AbstractContextManager[Any] | None = None,
    import_path: Path | None = None,
) -> dict[str, Any]:
    """Audit one problem in a fresh reference worker; never raises for the problem's faults.

    ``device`` and ``size`` must be resolved already (``judge.resolve_device``,
    ``problem.resolve_size``). A problem that needs a module this Python lacks,
    or has no variant in ``dtype``, is skipped: its record says why, with no flags.
    The checks and the timing run inside ``device_turn`` (when given): audits
    that share a GPU start and load side by side but time one at a time; the
    wait for the turn does not count against ``timeout``. ``import_path``: a directory the problem
    imports code from (a repository task's base checkout: kbench.judge.processes.sides).
    """
    started = time.monotonic()
    record = base_record(problem.path, problem.id, device, size, dtype)
    record.update(name=problem.name, level=problem.level, sha256=problem.sha256)
    try:
        check_runnable(problem, dtype)
    except ProblemError as exc:
        record.update(skipped=str(exc), seconds=time.monotonic() - started)
        return record
    if size == "small" and not problem.small:
        record["notes"].append("no KBENCH_SMALL: audited at the file's own size")
    deadline = started + timeout
    answer: dict[str, Any] = {}
    loaded: dict[str, Any] = {}
    env = worker_env(device)
    if threads:  # several audits share the CPU: threads beyond their share only wait on each other
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    with Worker(env) as worker:
        for message, what in [
            ({**load_message(problem, device, size, INIT_SEED, dtype, import_path), "role": "reference"},
             "loading the problem"),
            (audit_message(problem, device, timing), "auditing the problem"),
        ]:
            turn = device_turn if device_turn and message["op"] == "audit" else contextlib.nullcontext()
            try:
                waited = time.monotonic()
                with turn:
                    deadline += time.monotonic() - waited
                    answer = worker.request(message, deadline, what)
            except WorkerLost as lost:
                detail = lost.detail
            else:
                if answer["ok"]:
                    if what == "loading the problem":
                        loaded = answer
                    continue
                detail = f"{answer.get('phase')}: {answer.get('error')}"
            # An allocation that fails is the memory flag; any other failure is "broken".
            flag = "memory_over_device" if any(m in detail for m in MEMORY_ERRORS) else "broken"
            reason = str(reference_failure(problem, what, detail, worker))
            record.update(flags=[flag], reasons={flag: reason}, seconds=time.monotonic() - started)
            return record
    facts = answer["facts"]
    flags, reasons = flags_from_facts(facts)
    work = loaded.get("work") or {}
    memory = facts["memory"]
    judge_bytes = 4 * memory["inputs_bytes"] + 2 * memory["parameters_bytes"] + 3 * memory["outputs_bytes"]
    if judge_bytes > memory["device_bytes"]:
        record["notes"].append(
            f"the judge's two workers would need about {judge_bytes / 2**30:.2f} GiB "
            f"(4 x inputs + 2 x parameters + 3 x outputs), over the device's {memory['device_bytes'] / 2**30:.2f} GiB"
        )
    record["notes"] += [f"no kbench_{key}(): no speed-of-light time" for key in ("flops", "bytes") if work.get(key) is None]
    determinism = facts["determinism"]
    if not determinism["bitwise_equal"] and "nondeterministic" not in flags:
        record["notes"].append(
            f"two calls on the same inputs differ bitwise by up to {determinism['tolerance_fraction']:.3g} of the "
            "tolerance: the order of a sum (atomics), not randomness"
        )
    float64 = facts.get("float64") or {}
    timed = facts.get("timing")
    record.update(
        flags=flags,
        reasons=reasons,
        notes=record["notes"] + facts.pop("notes"),
        tolerance=facts.pop("tolerance", {}),
        reference_error={k: float64.get(k) for k in ("max_abs_error", "max_rel_error", "tolerance_fraction")},
        eager_ms=timed["median_ms"] if timed else None,
        memory_bytes=facts["memory"].get("total_bytes"),
        memory=facts.pop("memory"),
        flops=work.get("flops"),
        bytes=work.get("bytes"),
        device_name=loaded.get("device_name"),
        versions=loaded.get("versions"),
        facts=facts,
        seconds=time.monotonic() - started,
    )
    return record


def audit_problems(
    problems: list[Problem | dict[str, Any]],
    device: str,
    size: str,
    *,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    timing: TimingSettings = TimingSettings(),
    dtype: str = "float32",
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Audit each problem in its own worker, ``jobs`` at a time; records in input order.

    On a GPU only one audit at a time checks and times (``audit_problem``'s
    ``device_turn``), so ``jobs`` > 1 overlaps the workers' start (Python,
    torch, the problem) with another problem's timing, and no eager time is
    taken while another audit's checks run. An entry that is already a record
    (a file that could not be read as a problem) is passed through.
    """

    threads = max(1, (os.cpu_count() or 1) // jobs) if device == "cpu" and jobs > 1 else None
    device_turn = threading.Lock() if device.startswith("cuda") else None

    def one(item: Problem | dict[str, Any]) -> dict[str, Any]:
        if isinstance(item, dict):
            return {**item, "device": device, "size": size}
        return audit_problem(
            item, device, size, timeout=timeout, timing=timing, dtype=dtype, threads=threads, device_turn=device_turn
        )

    records: list[dict[str, Any] | None] = [None] * len(problems)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(one, item): i for i, item in enumerate(problems)}
        for future in as_completed(futures):
            records[futures[future]] = future.result()
            if on_done:
                on_done(records[futures[future]])
    return records  # type: ignore[return-value]
