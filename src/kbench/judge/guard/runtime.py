"""Runtime rules: what the candidate's process shows while the solution runs.

This module is imported by the worker before any solution code, so the
references it captures (the original functions of torch, time and kbench,
``torch.equal``, the thread table) are the real ones. A candidate that
replaces a function afterwards changes the module attribute, not the
reference kept here, and the next check sees the difference.

These checks run inside the process they watch: a determined candidate can
undo its tracks there, which is why the decisive checks (the comparison, the
expected outputs, the eager baseline) live in other processes. These are the
second line: cheap, and they catch what models actually write.

What the worker reports with is watched as closely as what it reports on:
``json`` (and its encoder, decoder and scanner), ``functools``, and every
class of the worker's own modules, attribute by attribute (a class attribute
such as ``Clock.time_call`` is no module function; an attribute added to
such a class counts too), each function's code object (``__code__`` swapped
under an unchanged function), and the worker's own objects that produce a
series' reports (``RuntimeGuard.pin``: its clock, its flush, its pipes).
"""

from __future__ import annotations

import contextlib
import functools
import json
import json.decoder
import json.encoder
import json.scanner
import sys
import time
import types
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kbench.judge.protocol import state
from kbench.judge.trusted.compare import leaves
from kbench.judge.guard import Finding
from kbench.judge.guard.launches import PYTORCH_NAMESPACES, LaunchWatch
from kbench.judge.guard.provenance import Provenance
from kbench.judge.guard.settings import SLOWER_ONLY

_equal = torch.equal
_current_frames = sys._current_frames
_get_rng_state = torch.get_rng_state
_cuda_get_rng_state = torch.cuda.get_rng_state

# Structural aten operations: allocation, views, copies, fills, casts, shape
# queries. Everything else computes, and counts for the reference-op and
# torch-compute rules (kbench.judge.guard.ops).
STRUCTURAL_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "new_zeros", "new_ones",
    "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill", "zero", "view", "_unsafe_view",
    "reshape", "_reshape_alias", "as_strided", "t", "transpose", "permute", "expand", "squeeze", "unsqueeze",
    "select", "slice", "split", "split_with_sizes", "chunk", "unbind", "contiguous", "clone", "copy", "_to_copy",
    "to", "detach", "alias", "lift_fresh", "lift_fresh_copy", "resize", "set", "_local_scalar_dense", "arange",
    "is_same_size", "result_type", "view_as_real", "view_as_complex", "flatten", "unflatten", "sym_size",
    "sym_stride", "sym_numel", "sym_storage_offset", "promote_types", "scalar_tensor", "eye", "linspace",
    "unsafe_split", "unsafe_chunk", "narrow", "diagonal", "unfold", "expand_as", "view_as", "movedim",
    "swapaxes", "_to_dense", "to_dense", "resize_as", "new_full", "empty_permuted", "_copy_from",
    "_copy_from_and_resize", "resolve_conj", "resolve_neg", "_conj", "_neg_view", "conj", "real", "imag",
    "view_copy", "alias_copy", "expand_copy", "permute_copy", "t_copy", "transpose_copy", "slice_copy",
    "select_copy", "squeeze_copy", "unsqueeze_copy", "detach_copy", "as_strided_copy", "split_copy",
    "slice_scatter", "select_scatter", "as_strided_scatter", "diagonal_scatter", "record_stream",
}


# The judge's modules in a candidate's process whose functions it must not replace.
JUDGE_MODULES = (
    "kbench.judge.worker.session", "kbench.judge.exchange.outputs", "kbench.judge.protocol.timing",
    "kbench.judge.worker.graphs", "kbench.judge.trusted.compare", "kbench.judge.protocol.state",
    "kbench.judge.exchange.wire", "kbench.judge.protocol.plain", "kbench.judge.exchange.failure",
    "kbench.judge.exchange.vmm", "kbench.judge.guard", "kbench.judge.guard.provenance", "kbench.judge.guard.launches",
)
# The library modules the worker reports through: its answers are JSON (written by
# kbench.judge.exchange.wire, which keeps its own references, but watched all the same).
REPORTING_NAMESPACES = {
    "json": json, "json.encoder": json.encoder, "json.decoder": json.decoder, "json.scanner": json.scanner,
    "json.JSONEncoder": json.JSONEncoder, "json.JSONDecoder": json.JSONDecoder, "functools": functools,
}


def watched_namespaces() -> dict[str, Any]:
    """The namespaces whose functions a candidate must not replace.

    The judge's own modules are looked up, not imported: the worker imports
    this module, and it is loaded by the time a guard takes its snapshot.
    """
    judged = {name: sys.modules[name] for name in JUDGE_MODULES if name in sys.modules}
    return {
        **REPORTING_NAMESPACES,
        **judge_classes(),
        "torch": torch,
        "torch.cuda": torch.cuda,
        "torch.nn.functional": torch.nn.functional,
        "torch.Tensor": torch.Tensor,
        "torch._C.TensorBase": torch._C.TensorBase,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.nn.Module": torch.nn.Module,
        "time": time,
        **judged,
        "kbench.judge.guard.runtime": sys.modules[__name__],
    }


def judge_classes() -> dict[str, type]:
    """The classes of the judge's own modules in this process (the worker's
    clock, its timed call, the guard's watchers, ...), by qualified name. Their
    every attribute is watched, not only the callable ones, and none may be added."""
    found = {}
    for name in (*JUDGE_MODULES, __name__):
        module = sys.modules.get(name)
        for value in list(vars(module).values()) if module else []:
            if isinstance(value, type) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return found


def _functions(namespace: Any, every: bool = False) -> dict[str, tuple[Any, Any]]:
    """Each callable member (every member, with ``every``) and its code object:
    a function whose ``__code__`` is swapped is the same object, running other code."""
    members = vars(namespace)
    return {
        name: (value, _code(value))
        for name, value in list(members.items())
        if every or (callable(value) and not isinstance(value, types.ModuleType))
    }


def _code(value: Any) -> Any:
    """The code a function (or a static or class method wrapping one) runs, if any."""
    value = getattr(value, "__func__", value) if isinstance(value, (staticmethod, classmethod)) else value
    return value.__code__ if isinstance(value, types.FunctionType) else None


class RuntimeGuard:
    """Snapshots taken before the solution is imported, and checks against them."""

    def __init__(self, device: torch.device):
        self.device = device
        # Whatever entering a dispatch mode imports lazily (on some PyTorch
        # versions torch._dynamo, which replaces torch.manual_seed) must be in
        # place before the snapshot, or it would read as a patch.
        with OpRecorder():
            torch.empty(1).add_(1)
        watched = watched_namespaces()
        self.classes = {label for label, namespace in watched.items() if isinstance(namespace, type)
                        and namespace.__module__.startswith(("kbench.", "json"))}
        self.functions = {label: _functions(ns, label in self.classes) for label, ns in watched.items()}
        self.device_settings = state.read_device()
        self.threads = set(_current_frames())
        self.pinned: dict[str, _Pinned] = {}  # the worker's objects that produce its reports

    def pin(self, label: str, obj: Any, names: tuple[str, ...] | None, types_: dict[str, type] | None = None) -> None:
        """Watch ``obj`` from now on: its class, the attributes ``names`` (None: every
        instance attribute, none added or removed), none set over a method of its
        class, and, where ``types_`` says, their exact types."""
        attrs = dict(vars(obj)) if names is None else {name: getattr(obj, name) for name in names}
        keys = frozenset(vars(obj)) if names is None else None
        self.pinned[label] = _Pinned(obj, type(obj), attrs, dict(types_ or {}), keys)

    def state_findings(self) -> list[Finding]:
        """Patched functions, changed global settings and threads left running (processes left
        running the judge sees itself: ``Worker.strays``)."""
        findings = []
        replaced = [
            f"{label}.{name}"
            for label, namespace in watched_namespaces().items()
            for name in self._replaced(label, namespace)
        ]
        replaced += self._pinned_changes()
        if replaced:
            shown = ", ".join(sorted(replaced)[:5]) + (" ..." if len(replaced) > 5 else "")
            findings.append(Finding("patched-function", f"replaced while running: {shown}"))
        now = state.read()
        changed = [f"{key}={now[key]!r}" for key in state.PINNED if now[key] != state.PINNED[key]
                   and not (key in SLOWER_ONLY and now[key] == SLOWER_ONLY[key])]  # cudnn.deterministic
        device_now = state.read_device()
        # A set-aside larger than the context's own: one given back below it (an honest kernel
        # that ends with cudaDeviceSetLimit(..., 0) where the driver's default is not 0, as on
        # the H200) keeps nothing past the flush.
        changed += [f"{key}={device_now[key]!r} (was {self.device_settings[key]!r})" for key in device_now
                    if device_now[key] > self.device_settings[key]]
        if changed:
            findings.append(Finding("global-state", "settings changed: " + ", ".join(changed)))
        extra_threads = set(_current_frames()) - self.threads
        if extra_threads:
            findings.append(Finding("threads", f"{len(extra_threads)} Python thread(s) left running"))
        return findings



    def _replaced(self, label: str, namespace: Any) -> list[str]:
        members = vars(namespace)
        before = self.functions.get(label, {})
        changed = [name for name, (original, code) in before.items()
                   if not _unchanged(f"{label}.{name}", members.get(name), original) or _code(original) is not code]
        if label in self.classes:
            changed += [name for name in members if name not in before]
        return changed

    def _pinned_changes(self) -> list[str]:
        return [f"{label}{change}" for label, pinned in self.pinned.items() for change in pinned.changes()]


class _Pinned:
    """One of the worker's objects as it was when pinned (``RuntimeGuard.pin``)."""

    def __init__(self, obj: Any, kind: type, attrs: dict[str, Any], types_: dict[str, type],
                 keys: frozenset[str] | None):
        self.obj, self.kind, self.attrs, self.types, self.keys = obj, kind, attrs, types_, keys

    def changes(self) -> list[str]:
        if type(self.obj) is not self.kind:
            return [" (its class)"]
        now = vars(self.obj)
        changed = [f".{name}" for name in sorted(frozenset(now) ^ self.keys)] if self.keys is not None else []
        changed += [f".{name}" for name, value in self.attrs.items() if now.get(name) is not value
                    or (name in self.types and type(now.get(name)) is not self.types[name])]
        changed += [f".{name} (over its class's)" for name in now
                    if any(callable(vars(base).get(name)) for base in self.kind.__mro__)]
        return changed


class CallWatch:
    """Around one forward call: inputs, random state and outputs. Make it
    before the call, ask for ``findings(out)`` after."""

    def __init__(self, guard: RuntimeGuard, args: list[Any], model: torch.nn.Module):
        self.guard = guard
        self.args = args
        self.model = model
        self.input_copies = [a.clone() if isinstance(a, torch.Tensor) else None for a in args]
        self.rng = self._rng()

    def _rng(self) -> list[torch.Tensor]:
        states = [_get_rng_state()]
        if self.guard.device.type == "cuda":
            states.append(_cuda_get_rng_state(self.guard.device))
        return states

    def findings(self, out: Any) -> list[Finding]:
        findings = self.guard.state_findings()
        if any(not _equal(a, b) for a, b in zip(self._rng(), self.rng)):
            findings.append(Finding("global-state", "forward changed the random number generator's state"))
        for index, (arg, copy) in enumerate(zip(self.args, self.input_copies)):
            if copy is not None and not _same(arg, copy):
                findings.append(Finding("input-mutated", f"input {index} changed during forward"))
        owned = [a for a in self.args if isinstance(a, torch.Tensor)]
        owned += list(self.model.parameters()) + list(self.model.buffers())
        for where, leaf in leaves(out)[0]:
            if not isinstance(leaf, torch.Tensor):
                continue
            if type(leaf) is not torch.Tensor:
                findings.append(Finding("output-subclass", f"{where} is a {type(leaf).__name__}, not a torch.Tensor"))
                continue
            if any(_overlap(leaf, other) for other in owned):
                findings.append(Finding("output-aliases-input", f"{where} shares memory with an input or a parameter"))
        return findings


class RecordedCall:
    """The watchers of the recorded call, entered around its clock
    (``timing.TimedCall``, after the flush): the operation recorder, the
    launch watch and (candidate: ``guard``) the watch of inputs, random state
    and outputs. Under CUDA-graph timing (``captured``: the recorder and the
    launch watch entered around the graph's capture) the operations and
    launches read are the captured graph's, which is what the calls replay."""

    def __init__(self, guard: RuntimeGuard | None, args: list[Any], model: torch.nn.Module):
        self.watch = CallWatch(guard, args, model) if guard else None
        self.recorder, self.launches = OpRecorder(), LaunchWatch()
        self._entered = entered(self.recorder, self.launches)

    def __enter__(self) -> "RecordedCall":
        self._entered.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._entered.__exit__(*exc)

    def ops(self, captured: tuple[OpRecorder, LaunchWatch] | None = None) -> list[str]:
        return sorted((captured[0] if captured else self.recorder).ops)

    def findings(self, out: Any, captured: tuple[OpRecorder, LaunchWatch] | None = None) -> list[Finding]:
        recorder, launches = captured or (self.recorder, self.launches)
        return (self.watch.findings(out) if self.watch else []) + launches.findings(recorder)


@contextlib.contextmanager
def entered(*contexts: Any) -> Any:
    """Every one of ``contexts`` entered, in order, for the ``with`` block."""
    with contextlib.ExitStack() as stack:
        for context in contexts:
            stack.enter_context(context)
        yield


def _unchanged(name: str, now: Any, original: Any) -> bool:
    """Still the original; PyTorch's own import of torch._dynamo wraps
    torch.manual_seed (functools.wraps), which is not a patch."""
    if now is original:
        return True
    return name == "torch.manual_seed" and "torch._dynamo" in sys.modules and getattr(now, "__wrapped__", None) is original


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if _equal(a, b):
        return True
    return a.is_floating_point() and bool(torch.isnan(a).logical_and(torch.isnan(b)).logical_or(a == b).all())


def _overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.device != b.device or a.numel() == 0 or b.numel() == 0:
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    a0, b0 = sa.data_ptr(), sb.data_ptr()
    return a0 < b0 + sb.nbytes() and b0 < a0 + sa.nbytes()


class OpRecorder(TorchDispatchMode):
    """Records the names of the aten operations a forward call executes, with
    the qualifiers of ``provenance.Provenance`` where data movement computes
    (``index_put[accumulate]``, ``masked_fill[by value]``)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Left True, PyTorch wraps __torch_dispatch__ to disable dynamo, which
        # imports torch._dynamo (about 2 s) into every worker. Nothing here is
        # compiled (the guard rejects torch.compile), so there is nothing to skip.
        return False

    def __init__(self) -> None:
        super().__init__()
        self.ops: set[str] = set()  # PyTorch's by their names; an extension's as ns::name
        self.foreign_ops: set[str] = set()  # registered outside PyTorch's namespaces: an extension's own
        self.provenance = Provenance()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        kwargs = kwargs or {}
        if getattr(func, "namespace", "aten") not in PYTORCH_NAMESPACES:
            name = f"{func.namespace}::{name}"
            self.foreign_ops.add(name)
            self.ops.add(name)
            return self._watched_inside(func, args, kwargs)
        try:
            out = func(*args, **kwargs)
        except BaseException:
            self.ops.add(name)
            raise
        self.ops.add(self.provenance.qualified(name, func, args, kwargs, out))
        return out

    def _watched_inside(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """An extension's operator, run with the recorder still watching what it does inside.
        PyTorch hands a mode the operator with the mode set aside, so what an operator defined
        in Python (``torch.library.custom_op``) or C++ computes with PyTorch inside it would go
        unrecorded. It is sent straight to its kernel for the tensors' device, past the mode's
        own dispatch key (which would hand it back here), with the recorder entered again."""
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        tensors += [t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, torch.Tensor)]
        backend = {"cpu": "CPU", "cuda": "CUDA"}.get(tensors[0].device.type) if tensors else None
        if backend is None or not torch._C._dispatch_has_computed_kernel_for_dispatch_key(func.name(), backend):
            return func(*args, **kwargs)
        with self:
            return func.redispatch(torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, backend)), *args, **kwargs)


def compute_ops(ops: set[str] | list[str]) -> set[str]:
    """The operations that compute (in-place variants read as their plain names)."""
    return {op.removesuffix("_") for op in ops} - STRUCTURAL_OPS
