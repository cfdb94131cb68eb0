"""The audit's measurements, taken inside a reference worker (the ``audit`` command).

The worker half of the problem audit: it runs the problem's own code on fixed
seeds and reports what it measured (zeros, constants, input and weight
sensitivity, determinism, the float64 error, timing, memory); it decides
nothing. The rules that turn these facts into flags run in the auditing
process (kbench.audit).
"""

from __future__ import annotations

import itertools
import random
import resource
import time
import traceback
from dataclasses import asdict
from typing import Any

import torch

from kbench.judge.trusted import pieces
from kbench.judge.trusted.compare import dtype_name, leaves, tolerance_for
from kbench.judge.protocol.timing import FreshInputs, TimingSettings, measure, seed_sequence

# Fixed seeds: an audit is reproducible (there is no candidate to outguess).
INPUT_SEEDS = (1001, 1002, 1003)
INIT_SEED = 2001
OTHER_INIT_SEED = 2002
TIMING_SEED = 3001
LOOSE_FACTOR = 100.0  # "too loose": tolerance over this many times the reference's own error
# The float64 reference runs on the device when this many times its inputs, output and
# parameters (in float64) are free there (the rest: what forward makes on the way).
FLOAT64_HEADROOM = 1.5


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
    """The measurements, in an order that holds as little as it can at once.

    Memory (docs/audit.md): ``out0`` is kept throughout; beside it at most one
    more output, one set of inputs (two while argument k is swapped in), or
    the float64 inputs and output; comparisons run piece by piece
    (kbench.judge.trusted.pieces), so their temporaries are a few pieces, not copies of
    the output; whatever a check no longer needs is dropped before the next.
    """

    def __init__(self, session: Any, msg: dict[str, Any]):
        self.session = session
        self.module = session.problem_module
        self.device: torch.device = session.device
        self.tolerance: dict[str, dict[str, float]] = msg["tolerance"]
        self.seeds: list[int] = msg["seeds"]
        self.init_seed: int = msg["init_seed"]
        self.msg = msg
        self.facts: dict[str, Any] = {"notes": []}
        self.arguments: list[bool] = []  # which forward arguments are tensors
        self.float64_bytes = 0  # what the float64 inputs, outputs and parameters take

    def note(self, text: str) -> None:
        self.facts["notes"].append(text)

    def run(self) -> dict[str, Any]:
        facts, session = self.facts, self.session
        facts["memory"] = {"device_bytes": self._capacity()}
        s0, s1 = self.seeds[0], self.seeds[1]
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        args = session.inputs(s0)
        self.arguments = [isinstance(x, torch.Tensor) for x in args]
        memory = {"inputs_bytes": _nbytes(args), "parameters_bytes": _nbytes(_state(session.model))}
        out0 = session.forward(args)
        memory["outputs_bytes"] = _nbytes(out0)
        memory["total_bytes"] = _nbytes([args, out0, _state(session.model)])  # shared storage once
        facts["memory"].update(memory)
        self.float64_bytes = sum(_bytes_as_float64(t) for t in pieces.tensors([args, out0, _state(session.model)]))
        facts["tolerance"] = {
            dtype_name(t.dtype): tolerance_for(t.dtype, self.tolerance)
            for t in pieces.tensors(out0)
            if t.is_floating_point() or t.is_complex()
        }
        del args

        # (4) determinism: a second call at once, on the same inputs drawn again (a
        # forward may modify its inputs). Drawing reseeds the random generators, so
        # they are put back where the first call left them: a forward that draws
        # random numbers draws new ones, as a second call would.
        after_first, python_state = _rng_states(self.device), random.getstate()
        args = session.inputs(s0)
        _set_rng_states(after_first, self.device)
        random.setstate(python_state)  # reseeded by the draw too
        again = session.forward(args)
        del args
        facts["random_in_forward"] = not _same_states(after_first, _rng_states(self.device))
        facts["determinism"] = {
            "bitwise_equal": pieces.bitwise_equal(out0, again),
            "comparison": self.compare(out0, again),
            **pieces.error_stats(again, out0, self.tolerance),
        }
        del again

        # (1) all-zero answers and (2) one fixed answer for every seed.
        zeros = [self.compare(out0, pieces.ZEROS)]
        constant = []
        for seed in self.seeds[1:]:
            out = session.forward(session.inputs(seed))
            zeros.append(self.compare(out, pieces.ZEROS))
            constant.append(self.compare(out, out0))
            del out
        facts["zeros"], facts["constant"] = zeros, constant

        facts["inputs"] = self._input_sensitivity(out0, s0, s1)
        facts["weights"] = self._weight_sensitivity(out0, s0)
        self._release()
        facts["float64"] = self._float64(out0, s0)
        del out0

        self._release()
        facts["memory"]["host_peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if self.device.type == "cuda":
            facts["memory"]["checks_peak_bytes"] = torch.cuda.max_memory_allocated(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
        if self.msg.get("time"):
            fresh = FreshInputs(session.inputs, seed_sequence(TIMING_SEED))
            deadline = time.monotonic() + self.msg["budget_seconds"]
            measured = measure(session.model, fresh, self.device, TimingSettings(**self.msg["timing"]), deadline)
            facts["timing"] = measured.to_dict()
            if self.device.type == "cuda":
                facts["memory"]["timing_peak_bytes"] = torch.cuda.max_memory_allocated(self.device)
        return facts

    def compare(self, expected: Any, actual: Any, cast: bool = False) -> dict[str, Any]:
        """Would ``actual`` pass as the answer where ``expected`` is right? (``pieces.ZEROS``: an all-zero answer.)"""
        return asdict(pieces.compare(expected, actual, self.tolerance, cast=cast))

    def _input_sensitivity(self, out0: Any, s0: int, s1: int) -> list[dict[str, Any]]:
        """(3) Each tensor argument in turn taken from another seed, the others kept.

        Both seeds' inputs are drawn again for each argument, so that beside
        ``out0`` no more than one set of inputs and argument k of the other are held."""
        checks = []
        for k, is_tensor in enumerate(self.arguments):
            if not is_tensor:
                continue
            theirs = self.session.inputs(s1)[k]
            args = self.session.inputs(s0)
            if pieces.bitwise_equal(args[k], theirs):
                checks.append({"argument": k, "skipped": "the same for every seed"})
                del args, theirs
                continue
            args[k] = theirs
            del theirs
            try:
                out = self.session.forward(args)
            except Exception as exc:
                checks.append({"argument": k, "skipped": f"forward failed: {getattr(exc, 'message', exc)}"})
                continue
            finally:
                del args
            checks.append({"argument": k, "comparison": self.compare(out0, out)})
            del out
        return checks

    def _weight_sensitivity(self, out0: Any, s0: int) -> dict[str, Any] | None:
        """(3) The model built under another init seed, on the same inputs."""
        state = _float_state(self.session.model)
        if not state:
            return None
        try:
            other = self._build(OTHER_INIT_SEED)
            changed = not pieces.bitwise_equal(state, _float_state(other))
            out = other(*self.session.inputs(s0))
        except Exception as exc:
            self.note(f"weights not checked: {type(exc).__name__}: {exc}")
            return None
        del other, state
        return {"changed": changed, "comparison": self.compare(out0, out)}

    def _float64(self, out0: Any, s0: int) -> dict[str, Any] | None:
        """(5) The same model and inputs in float64: the reference's own error.

        On the device where its inputs, output and parameters in float64 fit in
        what the device has free, else (or when the device runs out on the way)
        on the host; compared with ``out0`` piece by piece, each piece of the
        float64 output cast to the tested dtype as it is compared."""
        host = torch.device("cpu")
        place = self.device
        if self.device.type == "cuda":
            free, _ = torch.cuda.mem_get_info(self.device)
            if self.float64_bytes * FLOAT64_HEADROOM > free:
                place = host
                self.note(f"float64 reference computed on the host: about {self.float64_bytes / 2**30:.2f} GiB, "
                          f"{free / 2**30:.2f} GiB free on the device")
        ran_out = False
        try:
            try:
                out64 = self._forward64(s0, place)
            except torch.OutOfMemoryError:
                if place == host:
                    raise
                ran_out = True
            if ran_out:  # out of the except block: its traceback no longer holds what ran out
                self._release()
                self.note("float64 reference computed on the host: the device ran out of memory")
                out64 = self._forward64(s0, host)
        except Exception as exc:
            self.note(f"float64 reference not computed: {type(exc).__name__}: {exc}")
            return None
        if leaves(out64)[1] != leaves(out0)[1]:
            self.note("float64 reference not compared: its output has another structure")
            return None
        return {"comparison": self.compare(out64, out0, cast=True), **pieces.error_stats(out0, out64, self.tolerance)}

    def _forward64(self, seed: int, place: torch.device) -> Any:
        """The model built again under the init seed, in float64 on ``place``, on the inputs
        of ``seed`` converted one at a time (each tested-dtype input dropped once converted)."""
        model = self._build(self.init_seed).to(place).double()
        args = self.session.inputs(seed)
        for i, x in enumerate(args):
            args[i] = _to_float64(x, place)
            del x
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)  # constants made inside forward, too
        try:
            return model(*args)
        finally:
            torch.set_default_dtype(previous)

    def _build(self, seed: int) -> torch.nn.Module:
        """The problem's model as the worker's ``load`` builds it, under ``seed``, in the
        judged dtype (so that the float64 reference starts from the very same rounded weights)."""
        return self.session.make_model(seed)

    def _release(self) -> None:
        """Cached device memory back to the device, so that what the audit holds is what it uses."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.empty_cache()

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


def _set_rng_states(states: list[torch.Tensor], device: torch.device) -> None:
    torch.set_rng_state(states[0])
    if device.type == "cuda":
        torch.cuda.set_rng_state(states[1], device)


def _same_states(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


def _state(model: torch.nn.Module) -> list[torch.Tensor]:
    return list(itertools.chain(model.parameters(), model.buffers()))


def _float_state(model: torch.nn.Module) -> list[torch.Tensor]:
    return [t for t in _state(model) if t.is_floating_point() or t.is_complex()]


def _nbytes(obj: Any) -> int:
    """Bytes held by the tensors in ``obj``, each storage counted once."""
    seen: dict[Any, int] = {}
    for t in pieces.tensors(obj):
        storage = t.untyped_storage()
        seen[(t.device, storage.data_ptr())] = storage.nbytes()
    return sum(seen.values())


def _bytes_as_float64(t: torch.Tensor) -> int:
    """What ``t`` takes once its floating-point (complex) values are float64 (complex128)."""
    if t.is_complex():
        return t.numel() * 16
    return t.numel() * (8 if t.is_floating_point() else t.element_size())


def _to_float64(x: Any, place: torch.device) -> Any:
    if isinstance(x, torch.Tensor):
        if x.is_complex():
            return x.to(place, torch.complex128)
        if x.is_floating_point():
            return x.to(place, torch.float64)
        return x.to(place)
    return x
