"""Settings judged by their effect: which process-wide settings a solution may set.

A setting is a finding (``global-state``) when it could make a candidate faster or less
precise than the state the judge pins in both workers (kbench.judge.protocol.state), or change
what the judge draws. One that cannot is no finding, whatever it is called:

- a pinned setting set to the value the judge pins (``allow_tf32 = False``,
  ``set_float32_matmul_precision("highest")``), which answers restate "to be sure";
- a setting that can only slow a computation or keep it as precise: cuDNN restricted to its
  deterministic algorithms (``cudnn.deterministic = True``, ``use_deterministic_algorithms(True)``:
  a narrower choice of algorithms, of the same precision, and NaN-filled fresh memory),
  reduced-precision reductions in half-precision products switched off (``allow_fp16_reduced_
  precision_reduction = False``: full-precision accumulation), cuDNN left on (PyTorch's default,
  which neither worker changes);
- environment variables of a build (``TORCH_CUDA_ARCH_LIST``, ``MAX_JOBS``, ...) or of debugging,
  and the ones the judge sets in every worker (kbench.judge.processes.devices.worker_env): ``setdefault`` of
  those never changes anything (they are always set), and ``TRITON_INTERPRET`` set outright either
  is the worker's own value or runs the kernels in Triton's interpreter, which is only slower.

The runtime rule compares the pinned settings after every series of calls
(runtime.RuntimeGuard.state_findings) and lets through the values ``SLOWER_ONLY`` names.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from kbench.judge.guard.names import matches
from kbench.judge.protocol.state import PINNED

# The settings the judge pins, by the names that set them.
PINNED_BY = {"torch.set_float32_matmul_precision": "float32_matmul_precision",
             "torch.set_default_dtype": "default_dtype",
             **{f"torch.backends.{key}": key for key in PINNED if key.startswith(("cuda.", "cudnn."))}}
# Values of pinned settings (state.PINNED's keys) that can only slow a computation: the runtime rule's too.
SLOWER_ONLY: dict[str, object] = {"cudnn.deterministic": True}
# Settings (assigned) and the one value of each that cannot speed up or lower precision.
HARMLESS_VALUES: dict[str, object] = {
    "torch.backends.cudnn.deterministic": True,
    "torch.backends.cudnn.enabled": True,
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": False,
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": False,
    "torch.backends.cuda.matmul.allow_fp16_accumulation": False,
}
# Calls and the first argument that makes them harmless.
HARMLESS_CALLS: dict[str, object] = {"torch.use_deterministic_algorithms": True}

BUILD_ENVIRONMENT = ("TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "CUDA_HOME", "CUDA_PATH", "CC", "CXX", "TORCH_EXTENSIONS_DIR",
                     "CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "TORCH_SHOW_CPP_STACKTRACES")
# Set by the judge in every worker (kbench.judge.processes.devices.worker_env): setdefault changes nothing.
WORKER_ENVIRONMENT = ("TRITON_INTERPRET", "TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR", "KBENCH_WORKER_DEVICE")
# Set outright to one of these values: the worker's own, or only slower (the interpreter).
JUDGED_VALUES = {"TRITON_INTERPRET": ("0", "1")}


def harmless_setting(name: str, value: ast.AST | None, dotted: Callable[[ast.AST], str | None]) -> bool:
    """``name = value`` (or ``name(value)``) cannot make a candidate faster or less precise."""
    if value is None:
        return False
    if name in PINNED_BY and _equals(value, PINNED[PINNED_BY[name]], dotted):
        return True
    expected = HARMLESS_VALUES.get(name, HARMLESS_CALLS.get(name, _MISSING))
    return expected is not _MISSING and _equals(value, expected, dotted)


def harmless_environment(key: ast.AST | None, value: ast.AST | None, how: str) -> bool:
    """An environment variable set (``how``: "set" or "setdefault") that changes nothing the
    judge measures: a build's, a debugging one, or one the judge sets in every worker."""
    if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
        return False
    if key.value in BUILD_ENVIRONMENT or (how == "setdefault" and key.value in WORKER_ENVIRONMENT):
        return True
    return isinstance(value, ast.Constant) and str(value.value) in JUDGED_VALUES.get(key.value, ())


def harmless_autocast(name: str, call: ast.Call, dotted: Callable[[ast.AST], str | None]) -> bool:
    """An autocast switched off by a constant (``enabled=False``), or to float32
    (``dtype=torch.float32``): float32 kept."""
    if not matches(name, ("torch.autocast", "torch.cuda.amp.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")):
        return False
    keywords = {k.arg: k.value for k in call.keywords}
    enabled = keywords.get("enabled")
    if isinstance(enabled, ast.Constant) and enabled.value is False:
        return True
    dtype = keywords.get("dtype")
    return dtype is not None and dotted(dtype) in FLOAT32


# custom_fwd/custom_bwd lower nothing themselves: what they cast to (cast_inputs=torch.float16) is read.
PRECISION_NEUTRAL = ("torch.amp.custom_fwd", "torch.amp.custom_bwd", "torch.cuda.amp.custom_fwd",
                     "torch.cuda.amp.custom_bwd")
FLOAT32 = ("torch.float32", "torch.float")


_MISSING = object()


def _equals(value: ast.AST, expected: object, dotted: Callable[[ast.AST], str | None]) -> bool:
    if isinstance(value, ast.Constant):
        return type(value.value) is type(expected) and value.value == expected
    return isinstance(expected, str) and dotted(value) == expected
