"""The audit's measurements, taken inside a reference worker (the ``audit`` command).

The worker half of the problem audit: it runs the problem's own code on fixed
seeds and reports what it measured (zeros, constants, input and weight
sensitivity, determinism, the float64 error, timing, memory); it decides
nothing. The rules that turn these facts into flags run in the auditing
process (kbench.audit).
"""

from __future__ import annotations

import itertools
import math
import time
import traceback
from dataclasses import asdict
from typing import Any, Callable

import torch

from kbench.judge.compare import compare_outputs, dtype_name, leaves, tolerance_for
from kbench.judge.outputs import describe_devices
from kbench.judge.timing import FreshInputs, TimingSettings, measure, seed_sequence

# Fixed seeds: an audit is reproducible (there is no candidate to outguess).
INPUT_SEEDS = (1001, 1002, 1003)
INIT_SEED = 2001
OTHER_INIT_SEED = 2002
TIMING_SEED = 3001
LOOSE_FACTOR = 100.0  # "too loose": tolerance over this many times the reference's own error


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
        drawn_before = _rng_states(self.device)
        again = session.forward(copies)
        facts["random_in_forward"] = not _same_states(drawn_before, _rng_states(self.device))
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


def _rng_states(device: torch.device) -> list[torch.Tensor]:
    """The global random generators a forward could draw from (the host's, and the device's)."""
    states = [torch.get_rng_state()]
    if device.type == "cuda":
        states.append(torch.cuda.get_rng_state(device))
    return states


def _same_states(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


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
