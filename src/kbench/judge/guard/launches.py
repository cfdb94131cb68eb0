"""The launch watch: did a forward call run a kernel of the solution's own?

``no-kernel`` at run time rests on it (runtime.RecordedCall), so it must see every way an
honest solution calls its kernels, or an honest one is described as PyTorch alone:

- a Triton launch (``run`` in Triton's runtime, compiled or interpreted), a call into CuPy or
  Numba, a replay of a CUDA graph that captured such launches (``captures``);
- a function or method of a compiled extension (pybind11, ``load_inline``/``load``), seen by a
  profile hook as a C call;
- an operator of an extension called through ``torch.ops.<namespace>`` (``TORCH_LIBRARY``,
  ``torch.library``), also one registered as a composite kernel, which decomposes before the
  operation recorder's dispatch mode sees it: the C call of its ``OpOverload``;
- a pybind11 object called through ``__call__``: Python calls it through the type's slot, with
  no profile event at all, so while the watch is entered the ``__call__`` of each extension class
  is wrapped in a Python function the hook knows (and restored when it is left);
- any of these from threads the forward starts (a thread pool running the extension's C++ on
  chunks): ``threading.setprofile`` puts the hook in every thread started while it watches.

A candidate can undo any of this in its own process; it then only loses the credit.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from kbench.judge.guard import Finding, captures

KERNEL_PACKAGES = ("cupy", "numba")  # whatever forward calls there, it launches kernels the static rule accepts
# Operator namespaces of PyTorch and its own libraries: their operations are
# PyTorch's. Any other namespace is an extension's (the solution's own kernels).
PYTORCH_NAMESPACES = ("aten", "prim", "prims", "quantized", "_quantized", "mkldnn", "onednn", "torchvision",
                      "torchaudio", "fbgemm", "_c10d_functional", "c10d")
OPERATORS = "torch._ops."  # the module an OpOverload's C function names: torch._ops.<namespace>


def _calling(original: Any) -> Any:
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:  # the code the hook knows (_CALL_CODE)
        return original(self, *args, **kwargs)

    __call__.__kbench_launch__ = original  # type: ignore[attr-defined]
    return __call__


_CALL_CODE = _calling(None).__code__


class LaunchWatch:
    """Around one forward call: ``launched`` names the solution's own kernels it ran.
    ``chain``: the hook that was set before keeps being called (a watch around a graph's
    capture, which may happen inside another watch)."""

    def __init__(self, chain: bool = False) -> None:
        self.launched: set[str] = set()
        self._chain = chain
        triton = sys.modules.get("triton")
        self._triton = os.path.dirname(triton.__file__) + os.sep if getattr(triton, "__file__", None) else None
        self._installed = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
        self._previous: Any = None
        self._previous_threads: Any = None
        self._wrapped: list[tuple[type, Any]] = []

    def __enter__(self) -> "LaunchWatch":
        self._previous, self._previous_threads = sys.getprofile(), threading.getprofile()
        self._wrap_calls()
        threading.setprofile(self._hook)
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(self._previous)
        threading.setprofile(self._previous_threads)
        for kind, original in reversed(self._wrapped):
            setattr(kind, "__call__", original)
        self._wrapped.clear()

    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        if self._chain and self._previous is not None:
            self._previous(frame, event, arg)
        if event == "call":
            code = frame.f_code
            if self._triton and code.co_name == "run" and code.co_filename.startswith(self._triton):
                self.launched.add("a Triton kernel")
            elif code is _CALL_CODE:
                self.launched.add(f"{type(frame.f_locals.get('self')).__qualname__}.__call__")
            elif str(frame.f_globals.get("__name__", "")).split(".")[0] in KERNEL_PACKAGES:
                self.launched.add(frame.f_globals["__name__"])
            elif captures.is_replay(code):
                replayed = captures.replayed_launches(frame.f_locals.get("self"))
                if replayed:
                    self.launched.add("a CUDA graph of " + ", ".join(sorted(replayed)))
        elif event == "c_call":
            module = str(getattr(arg, "__module__", None) or "")
            if module.startswith(OPERATORS):
                namespace = module[len(OPERATORS):]
                if namespace and namespace not in PYTORCH_NAMESPACES:
                    self.launched.add(f"{namespace}::{getattr(arg, '__name__', '?')}")
            elif module.split(".")[0] in KERNEL_PACKAGES or self._from_an_extension(arg):
                self.launched.add(f"{module}.{getattr(arg, '__name__', '?')}")

    def _from_an_extension(self, function: Any) -> bool:
        """A compiled function of a library loaded from outside the Python
        installation, or bound by pybind11 in a module never imported by name
        (``load_inline`` loads its module without registering it)."""
        name = getattr(function, "__module__", None)
        if not isinstance(name, str):
            return False
        module = sys.modules.get(name)
        if module is None:  # a package's own bindings live in a package that is loaded
            bound = type(getattr(function, "__self__", None)).__module__ == "pybind11_builtins"
            return bound and name.split(".")[0] not in sys.modules
        where = getattr(module, "__file__", None) or ""
        return where.endswith((".so", ".pyd")) and not os.path.realpath(where).startswith(self._installed)

    def _wrap_calls(self) -> None:
        """Wrap ``__call__`` of every pybind11 class of an extension (its module loaded from
        outside the installation, or never imported by name), so that calling one is seen."""
        for kind in _pybind_classes():
            original = vars(kind).get("__call__")
            if original is None or hasattr(original, "__kbench_launch__") or not self._extension_class(kind):
                continue
            try:
                setattr(kind, "__call__", _calling(original))
            except (TypeError, AttributeError):
                continue
            self._wrapped.append((kind, original))

    def _extension_class(self, kind: type) -> bool:
        name = getattr(kind, "__module__", None)
        module = sys.modules.get(name) if isinstance(name, str) else None
        if module is None:
            return isinstance(name, str) and name.split(".")[0] not in sys.modules
        where = getattr(module, "__file__", None) or ""
        return where.endswith((".so", ".pyd")) and not os.path.realpath(where).startswith(self._installed)

    def findings(self, recorder: Any) -> list[Finding]:
        """``no-kernel`` unless the watch saw a launch or the recorder an extension's operator."""
        if self.launched or recorder.foreign_ops:
            return []
        return [Finding("no-kernel", "forward launched no kernel of its own at run time (no Triton launch, "
                        "no function or operator of a compiled extension): it computes with PyTorch alone")]


def _pybind_classes() -> list[type]:
    """Every class derived from a pybind11 base seen in the process (each pybind11 ABI
    has its own ``pybind11_object``; the ones torch's and the extensions' modules use)."""
    bases = {base for kind in _PYBIND_ROOTS() for base in kind.__mro__ if base.__name__ == "pybind11_object"}
    found: list[type] = []
    stack = list(bases)
    while stack:
        kind = stack.pop()
        try:
            subclasses = type.__subclasses__(kind)
        except TypeError:
            continue
        found.extend(subclasses)
        stack.extend(subclasses)
    return found


def _PYBIND_ROOTS() -> list[type]:
    torch = sys.modules.get("torch")
    graph = getattr(getattr(torch, "_C", None), "Graph", None)
    return [graph] if isinstance(graph, type) else []
