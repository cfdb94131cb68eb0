"""The audit: is a problem sound enough to judge kernels with?

A problem is unsound when a wrong kernel can pass it (an all-zero or constant
answer, or one that ignores an input or the weights), when its reference
cannot agree with itself (a forward that is not deterministic), when its
tolerance does not fit its dtype, or when it cannot be timed or held on the
device. ``audit_problem`` runs one problem in a throw-away reference worker
(the same process the judge uses, so a broken or hanging problem becomes the
flag ``broken`` instead of stopping the audit); the worker runs
``audit_in_worker`` and reports what it measured, and the rules in
``flags_from_facts`` decide, in this process, which flags apply.
docs/audit.md states every rule and threshold.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import torch

from kbench.compare import compare_outputs, dtype_name, leaves, tolerance_for
from kbench.judge import load_message, reference_failure, worker_env
from kbench.problem import Problem, ProblemError, check_runnable
from kbench.sandbox import Worker, WorkerLost, default_memory_limit
from kbench.timing import FreshInputs, TimingSettings, measure, seed_sequence

# Fixed seeds: an audit is reproducible (there is no candidate to outguess).
INPUT_SEEDS = (1001, 1002, 1003)
INIT_SEED = 2001
OTHER_INIT_SEED = 2002
TIMING_SEED = 3001

EAGER_MS_RANGE = (1.0, 20.0)  # target eager time of one call on the GPU
LOOSE_FACTOR = 100.0  # "too loose": tolerance over this many times the reference's own error
DEFAULT_TIMEOUT = 300.0  # seconds per problem: load, checks and timing
# How an allocation that does not fit shows up: PyTorch's CPU and CUDA
# allocators, and the judge's host memory limit (sandbox.Worker).
MEMORY_ERRORS = ("out of memory", "OutOfMemoryError", "can't allocate memory", "host memory limit exceeded")

FLAGS = (
    "broken",
    "zeros_pass",
    "near_constant",
    "input_insensitive",
    "weight_insensitive",
    "nondeterministic",
    "tolerance_too_tight",
    "tolerance_too_loose",
    "runtime_out_of_range",
    "memory_over_device",
)


# --------------------------------------------------------------------------
# In the worker process (after a ``load`` with role "reference")
# --------------------------------------------------------------------------


def audit_in_worker(session: Any, msg: dict[str, Any]) -> dict[str, Any]:
    """The worker's ``audit`` command: measure, decide nothing.

    Answers ``{"ok": True, "facts": {...}}``, or ``ok: False`` with the phase
    and error when the problem's own code fails on its first inputs.
    """
    try:
        facts = _Checks(session, msg).run()
    except Exception as exc:  # the worker's Failure carries phase/message/trace
        trace = getattr(exc, "trace", "") or traceback.format_exc()
        return {
            "ok": False,
            "phase": getattr(exc, "phase", "audit"),
            "error": getattr(exc, "message", f"{type(exc).__name__}: {exc}"),
            "traceback": trace[-8000:],
        }
    return {"ok": True, "facts": facts}


class _Checks:
    def __init__(self, session: Any, msg: dict[str, Any]):
        self.session = session
        self.module = session.problem_module
        self.device: torch.device = session.device
        self.tolerance: dict[str, dict[str, float]] = msg["tolerance"]
        self.seeds: list[int] = msg["seeds"]
        self.init_seed: int = msg["init_seed"]
        self.msg = msg
        self.facts: dict[str, Any] = {"notes": []}

    def note(self, text: str) -> None:
        self.facts["notes"].append(text)

    def run(self) -> dict[str, Any]:
        facts, session = self.facts, self.session
        facts["memory"] = {"device_bytes": self._capacity()}
        s0, s1 = self.seeds[0], self.seeds[1]
        args = session.inputs(s0)
        copies = _map(torch.clone, args)
        memory = {"inputs_bytes": _nbytes(args), "parameters_bytes": _nbytes(_state(session.model))}
        out0 = session.forward(args)
        memory["outputs_bytes"] = _nbytes(out0)
        memory["total_bytes"] = _nbytes([args, out0, _state(session.model)])  # shared storage once
        facts["memory"].update(memory)
        facts["tolerance"] = {
            dtype_name(t.dtype): tolerance_for(t.dtype, self.tolerance)
            for t in _tensors(out0)
            if t.is_floating_point() or t.is_complex()
        }
        del args

        # (4) determinism: a second call at once, on a copy of the same inputs (a
        # forward may modify its inputs; drawing them again would reseed the RNG).
        again = session.forward(copies)
        facts["determinism"] = {
            "bitwise_equal": _bitwise_equal(out0, again),
            "comparison": self.compare(out0, again),
            **_error_stats(again, out0, self.tolerance),
        }
        del again, copies

        # (1) all-zero answers and (2) one fixed answer for every seed.
        zeros = [self.compare(out0, _map(torch.zeros_like, out0))]
        constant = []
        for seed in self.seeds[1:]:
            out = session.forward(session.inputs(seed))
            zeros.append(self.compare(out, _map(torch.zeros_like, out)))
            constant.append(self.compare(out, out0))
            del out
        facts["zeros"], facts["constant"] = zeros, constant

        facts["inputs"] = self._input_sensitivity(out0, s0, s1)
        facts["weights"] = self._weight_sensitivity(out0, s0)
        facts["float64"] = self._float64(out0, s0)
        del out0

        if self.device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(self.device)
        if self.msg.get("time"):
            fresh = FreshInputs(session.inputs, seed_sequence(TIMING_SEED))
            deadline = time.monotonic() + self.msg["budget_seconds"]
            measured = measure(session.model, fresh, self.device, TimingSettings(**self.msg["timing"]), deadline)
            facts["timing"] = measured.to_dict()
            if self.device.type == "cuda":
                facts["memory"]["timing_peak_bytes"] = torch.cuda.max_memory_allocated(self.device)
        return facts

    def compare(self, expected: Any, actual: Any) -> dict[str, Any]:
        """Would ``actual`` pass as the answer where ``expected`` is right?"""
        from kbench.worker import describe_devices

        result = compare_outputs(
            expected, actual, describe_devices(expected), describe_devices(actual), self.tolerance
        )
        return asdict(result)

    def _input_sensitivity(self, out0: Any, s0: int, s1: int) -> list[dict[str, Any]]:
        """(3) Each tensor argument in turn taken from another seed, the others kept."""
        other = self.session.inputs(s1)
        checks = []
        for k, (mine, theirs) in enumerate(zip(self.session.inputs(s0), other)):
            if not isinstance(mine, torch.Tensor):
                continue
            if _bitwise_equal(mine, theirs):
                checks.append({"argument": k, "skipped": "the same for every seed"})
                continue
            args = self.session.inputs(s0)
            args[k] = theirs
            try:
                out = self.session.forward(args)
            except Exception as exc:
                checks.append({"argument": k, "skipped": f"forward failed: {getattr(exc, 'message', exc)}"})
                continue
            checks.append({"argument": k, "comparison": self.compare(out0, out)})
        return checks

    def _weight_sensitivity(self, out0: Any, s0: int) -> dict[str, Any] | None:
        """(3) The model built under another init seed, on the same inputs."""
        state = _float_state(self.session.model)
        if not state:
            return None
        try:
            other = self._build(OTHER_INIT_SEED)
            changed = not _bitwise_equal(state, _float_state(other))
            out = other(*self.session.inputs(s0))
        except Exception as exc:
            self.note(f"weights not checked: {type(exc).__name__}: {exc}")
            return None
        return {"changed": changed, "comparison": self.compare(out0, out)}

    def _float64(self, out0: Any, s0: int) -> dict[str, Any] | None:
        """(5) The same model and inputs in float64: the reference's own error."""
        try:
            model = self._build(self.init_seed).double()
            args = [_to_float64(x) for x in self.session.inputs(s0)]
            previous = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)  # constants made inside forward, too
            try:
                out64 = model(*args)
            finally:
                torch.set_default_dtype(previous)
        except Exception as exc:
            self.note(f"float64 reference not computed: {type(exc).__name__}: {exc}")
            return None
        if leaves(out64)[1] != leaves(out0)[1]:
            self.note("float64 reference not compared: its output has another structure")
            return None
        expected = _map_like(out64, out0)
        return {"comparison": self.compare(expected, out0), **_error_stats(out0, out64, self.tolerance)}

    def _build(self, seed: int) -> torch.nn.Module:
        """The problem's model as the worker's ``load`` builds it, under ``seed``, in the
        judged dtype (so that the float64 reference starts from the very same rounded weights)."""
        return self.session.make_model(seed)

    def _capacity(self) -> int:
        if self.device.type == "cuda":
            return torch.cuda.get_device_properties(self.device).total_memory
        return int(self.msg["host_memory_bytes"])


def _state(model: torch.nn.Module) -> list[torch.Tensor]:
    return list(itertools.chain(model.parameters(), model.buffers()))


def _float_state(model: torch.nn.Module) -> list[torch.Tensor]:
    return [t for t in _state(model) if t.is_floating_point() or t.is_complex()]


def _tensors(obj: Any) -> list[torch.Tensor]:
    return [leaf for _, leaf in leaves(obj)[0] if isinstance(leaf, torch.Tensor)]


def _nbytes(obj: Any) -> int:
    """Bytes held by the tensors in ``obj``, each storage counted once."""
    seen: dict[Any, int] = {}
    for t in _tensors(obj):
        storage = t.untyped_storage()
        seen[(t.device, storage.data_ptr())] = storage.nbytes()
    return sum(seen.values())


def _map(fn: Callable[[torch.Tensor], Any], obj: Any) -> Any:
    """``obj`` with ``fn`` applied to every tensor, the nesting kept."""
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, (tuple, list)):
        items = [_map(fn, x) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return obj


def _map_like(source: Any, like: Any) -> Any:
    """``source`` (the float64 output) cast leaf by leaf to the dtypes of ``like``."""
    casts = iter([t.dtype for t in _tensors(like)])
    return _map(lambda t: t.to(next(casts)), source)


def _to_float64(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        if x.is_complex():
            return x.to(torch.complex128)
        if x.is_floating_point():
            return x.to(torch.float64)
    return x


def _bits(t: torch.Tensor) -> torch.Tensor:
    try:
        return t.detach().contiguous().reshape(-1).view(torch.uint8)
    except RuntimeError:
        return t.detach()


def _bitwise_equal(a: Any, b: Any) -> bool:
    (la, sa), (lb, sb) = leaves(a), leaves(b)
    if sa != sb or len(la) != len(lb):
        return False
    for (_, x), (_, y) in zip(la, lb):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(_bits(x), _bits(y)):
                return False
        elif x != y and not (x != x and y != y):  # NaN == NaN here
            return False
    return True


def _error_stats(out: Any, out64: Any, overrides: dict[str, dict[str, float]]) -> dict[str, float]:
    """The reference's error against float64, and the largest fraction of the tolerance it uses.

    ``tolerance_fraction`` = max over elements of |out - out64| / (atol + rtol |out64|):
    over 1 the reference itself fails; under 1/LOOSE_FACTOR the tolerance is
    more than LOOSE_FACTOR times the error the dtype needs.
    """
    max_abs = max_rel = fraction = 0.0
    for got, want in zip(_tensors(out), _tensors(out64)):
        if not (got.is_floating_point() or got.is_complex()):
            if not torch.equal(got, want.to(got.dtype)):
                fraction = math.inf
            continue
        tol = tolerance_for(got.dtype, overrides)
        if got.is_complex():
            got, want = torch.view_as_real(got), torch.view_as_real(want)
        got, want = got.double(), want.double()
        both = torch.isfinite(got) & torch.isfinite(want)
        if not bool(both.all()):
            same = (got == want) | (torch.isnan(got) & torch.isnan(want))
            if not bool((same | both).all()):
                fraction = math.inf
            got, want = got[both], want[both]
        if got.numel() == 0:
            continue
        diff = (got - want).abs()
        allowed = tol["atol"] + tol["rtol"] * want.abs()
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float((diff / want.abs().clamp_min(torch.finfo(torch.float64).tiny)).max()))
        over = diff / allowed.clamp_min(torch.finfo(torch.float64).tiny)
        over = torch.where(diff == 0, torch.zeros_like(over), over)
        fraction = max(fraction, float(over.max()))
    return {"max_abs_error": max_abs, "max_rel_error": max_rel, "tolerance_fraction": fraction}


# --------------------------------------------------------------------------
# In the auditing process: run workers, apply the rules
# --------------------------------------------------------------------------


def flags_from_facts(facts: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The rules (docs/audit.md): which flags the measured facts raise, and why."""
    reasons: dict[str, str] = {}
    zeros, constant = facts.get("zeros", []), facts.get("constant", [])
    if zeros and all(c["ok"] for c in zeros):
        reasons["zeros_pass"] = f"an all-zero output passes against the reference for all {len(zeros)} input seeds"
    if constant and all(c["ok"] for c in constant):
        reasons["near_constant"] = (
            f"the output for one input seed passes as the answer for the {len(constant)} other seed(s)"
        )
    ignored = [c["argument"] for c in facts.get("inputs", []) if c.get("comparison", {}).get("ok")]
    if ignored:
        reasons["input_insensitive"] = (
            f"with forward argument(s) {ignored} taken from another input seed "
            "(the others kept), the output still passes against the original"
        )
    weights = facts.get("weights")
    if weights and weights["comparison"]["ok"]:
        why = "" if weights["changed"] else " (another init seed gives the very same weights)"
        reasons["weight_insensitive"] = f"the model built under another init seed passes{why}"
    determinism = facts.get("determinism")
    if determinism and not determinism["bitwise_equal"]:
        comparison = determinism["comparison"]
        # Absent in records from before the share was measured: then any difference counts.
        share = determinism.get("tolerance_fraction", math.inf)
        if not comparison["ok"]:
            reasons["nondeterministic"] = f"two calls on the same inputs differ beyond the tolerance ({comparison['detail']})"
        elif share > 1 / LOOSE_FACTOR:
            reasons["nondeterministic"] = (
                f"two calls on the same inputs differ by up to {share:.3g} of the tolerance "
                f"(more than 1/{LOOSE_FACTOR:g} of it: not only the order of a sum)"
            )
    float64 = facts.get("float64")
    if float64 and determinism and not determinism["comparison"]["ok"]:
        float64 = None  # a reference that disagrees with itself says nothing about its dtype
    if float64:
        fraction = float64["tolerance_fraction"]
        if not float64["comparison"]["ok"]:
            reasons["tolerance_too_tight"] = (
                "the reference in its own dtype fails its tolerance against float64: "
                + float64["comparison"]["detail"]
            )
        elif fraction < 1 / LOOSE_FACTOR and ({"zeros_pass", "near_constant"} & reasons.keys()):
            reasons["tolerance_too_loose"] = (
                f"the reference uses {fraction:.3g} of the tolerance (its error is under "
                f"1/{LOOSE_FACTOR:g} of it) and an all-zero or constant answer passes"
            )
    timing = facts.get("timing")
    if timing:
        low, high = EAGER_MS_RANGE
        if not low <= timing["median_ms"] <= high:
            reasons["runtime_out_of_range"] = (
                f"eager median {timing['median_ms']:.4g} ms is outside {low:g}-{high:g} ms"
            )
    memory = facts.get("memory", {})
    if memory.get("total_bytes") and memory["total_bytes"] > memory["device_bytes"]:
        reasons["memory_over_device"] = (
            f"inputs + outputs + parameters need {memory['total_bytes'] / 2**30:.2f} GiB, "
            f"the device has {memory['device_bytes'] / 2**30:.2f} GiB"
        )
    return [f for f in FLAGS if f in reasons], reasons


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
) -> dict[str, Any]:
    """Audit one problem in a fresh reference worker; never raises for the problem's faults.

    ``device`` and ``size`` must be resolved already (``judge.resolve_device``,
    ``problem.resolve_size``). A problem that needs a module this Python lacks,
    or has no variant in ``dtype``, is skipped: its record says why, with no flags.
    The checks and the timing run inside ``device_turn`` (when given): audits
    that share a GPU start and load side by side but time one at a time; the
    wait for the turn does not count against ``timeout``.
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
            ({**load_message(problem, device, size, INIT_SEED, dtype), "role": "reference"}, "loading the problem"),
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
