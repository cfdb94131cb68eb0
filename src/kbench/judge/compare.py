"""Comparing a candidate's outputs with the reference's, outside both processes.

Checks run in order and the first failure is the reason: structure (same
nesting of tuples, lists and dicts), then per tensor its type, shape, dtype and
device, then finiteness (finite wherever the reference is finite; NaN and
infinities only where the reference has the same), then values within the
tolerance ``|actual - expected| <= atol + rtol * |expected|``. Integer and
boolean outputs must match exactly. This runs in the reference's process, on
its device (see ``worker.compare_with_saved``), never in the candidate's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

# Default tolerances per dtype. fp32 is held to 1e-4 absolute and relative;
# half-precision types to 1e-2. A problem may set its own (KBENCH_TOLERANCE).
DEFAULT_TOLERANCES: dict[str, dict[str, float]] = {
    "float64": {"atol": 1e-7, "rtol": 1e-7},
    "float32": {"atol": 1e-4, "rtol": 1e-4},
    "complex64": {"atol": 1e-4, "rtol": 1e-4},
    "float16": {"atol": 1e-2, "rtol": 1e-2},
    "bfloat16": {"atol": 1e-2, "rtol": 1e-2},
}
EXACT = {"atol": 0.0, "rtol": 0.0}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def tolerance_for(dtype: torch.dtype, overrides: dict[str, dict[str, float]]) -> dict[str, float]:
    name = dtype_name(dtype)
    if name in overrides:
        return {**DEFAULT_TOLERANCES.get(name, EXACT), **overrides[name]}
    return DEFAULT_TOLERANCES.get(name, EXACT)


@dataclass(frozen=True)
class Comparison:
    """The result of comparing one set of outputs; ``check`` names what failed."""

    ok: bool
    check: str
    detail: str
    max_abs_error: float | None = None
    max_rel_error: float | None = None

    def errors(self) -> dict[str, Any]:
        """What a verdict's trial keeps of the comparison."""
        return {"check": self.check, "detail": self.detail, "max_abs_error": self.max_abs_error,
                "max_rel_error": self.max_rel_error}


def leaves(obj: Any, path: str = "output") -> tuple[list[tuple[str, Any]], list[str]]:
    """(path, leaf) pairs and a structural signature of a nested output.

    Walked with an explicit stack: a recursive closure would be a reference
    cycle holding every leaf (gigabytes of tensors) until the garbage collector
    happens to run, and a worker's every call fingerprints its outputs."""
    found: list[tuple[str, Any]] = []
    shape: list[str] = []
    pending: list[tuple[str, Any]] = [(path, obj)]
    while pending:
        where, node = pending.pop()
        if isinstance(node, (tuple, list)):
            shape.append(f"{where}:{type(node).__name__}[{len(node)}]")
            items = [(f"{where}[{i}]", item) for i, item in enumerate(node)]
        elif isinstance(node, dict):
            shape.append(f"{where}:dict{sorted(map(str, node))}")
            items = [(f"{where}[{key!r}]", node[key]) for key in sorted(node, key=str)]
        else:
            found.append((where, node))
            continue
        pending.extend(reversed(items))
    return found, shape


def compare_outputs(
    expected: Any,
    actual: Any,
    expected_devices: dict[str, str],
    actual_devices: dict[str, str],
    tolerance_overrides: dict[str, dict[str, float]] | None = None,
) -> Comparison:
    """Compare two (CPU-loaded) outputs; devices are as each process reported them."""
    overrides = tolerance_overrides or {}
    expected_leaves, expected_shape = leaves(expected)
    actual_leaves, actual_shape = leaves(actual)
    if expected_shape != actual_shape or len(expected_leaves) != len(actual_leaves):
        return Comparison(
            False,
            "structure",
            f"expected {_describe(expected)}, got {_describe(actual)}",
        )
    worst_abs, worst_rel = 0.0, None
    for (where, want), (_, got) in zip(expected_leaves, actual_leaves):
        if not isinstance(want, torch.Tensor):
            if type(got) is not type(want) or got != want:
                return Comparison(False, "value", f"{where}: expected {want!r}, got {got!r}")
            continue
        if not isinstance(got, torch.Tensor):
            return Comparison(
                False, "type", f"{where}: expected a tensor, got {type(got).__name__}"
            )
        if got.shape != want.shape:
            return Comparison(
                False, "shape", f"{where}: expected shape {tuple(want.shape)}, got {tuple(got.shape)}"
            )
        if got.dtype != want.dtype:
            return Comparison(
                False, "dtype", f"{where}: expected dtype {dtype_name(want.dtype)}, got {dtype_name(got.dtype)}"
            )
        if expected_devices.get(where) != actual_devices.get(where):
            return Comparison(
                False,
                "device",
                f"{where}: expected device {expected_devices.get(where)}, got {actual_devices.get(where)}",
            )
        result = _compare_values(where, want, got, tolerance_for(want.dtype, overrides))
        if not result.ok:
            return result
        worst_abs = max(worst_abs, result.max_abs_error or 0.0)
        if result.max_rel_error is not None:
            worst_rel = max(worst_rel or 0.0, result.max_rel_error)
    return Comparison(True, "ok", "all outputs match", worst_abs, worst_rel)


def _compare_values(where: str, want: torch.Tensor, got: torch.Tensor, tol: dict[str, float]) -> Comparison:
    if not (want.is_floating_point() or want.is_complex()):
        bad = got != want
        if bool(bad.any()):
            index = _first_index(bad)
            return Comparison(
                False,
                "values",
                f"{where}: {int(bad.sum())} of {want.numel()} element(s) differ, and {dtype_name(want.dtype)} "
                f"must match exactly (first at {index}: expected {want[index].item()}, got {got[index].item()})",
            )
        return Comparison(True, "ok", "", 0.0, 0.0)
    if want.is_complex():
        want, got = torch.view_as_real(want), torch.view_as_real(got)
    # Errors in fp32 for fp32 and narrower types (exact enough to judge a 1e-4
    # tolerance), fp64 for fp64: the outputs can be gigabytes.
    work = torch.float64 if want.dtype == torch.float64 else torch.float32
    want, got = want.to(work), got.to(work)
    want_finite = torch.isfinite(want)
    special_mismatch = (want_finite != torch.isfinite(got)) | (
        ~want_finite & ~(torch.isnan(want) & torch.isnan(got)) & (want != got)
    )
    if bool(special_mismatch.any()):
        index = _first_index(special_mismatch)
        return Comparison(
            False,
            "finite",
            f"{where}: {int(special_mismatch.sum())} element(s) non-finite where the reference differs "
            f"(first at {index}: expected {want[index].item()}, got {got[index].item()})",
        )
    if want.numel() == 0:
        return Comparison(True, "ok", "", 0.0, 0.0)
    diff = (got - want).abs_().nan_to_num_(0.0, 0.0, 0.0)
    magnitude = want.abs().nan_to_num_(0.0, 0.0, 0.0)
    max_abs = float(diff.max())
    bad = diff > tol["atol"] + tol["rtol"] * magnitude
    max_rel = _max_rel_error(diff, magnitude, max(tol["atol"], torch.finfo(work).tiny))
    if bool(bad.any()):
        index = _first_index(bad)
        worst_at_zero = float(want.flatten()[int(diff.flatten().argmax())]) == 0.0
        return Comparison(
            False,
            "values",
            f"{where}: {int(bad.sum())} of {want.numel()} element(s) outside "
            f"atol={tol['atol']:g} rtol={tol['rtol']:g}; max abs error {max_abs:.6g}"
            f"{' (where the expected value is 0)' if worst_at_zero else ''}, {_rel_text(max_rel, tol['atol'])} "
            f"(first at {index}: expected {want[index].item():.8g}, got {got[index].item():.8g})",
            max_abs,
            max_rel,
        )
    return Comparison(True, "ok", "", max_abs, max_rel)


def _max_rel_error(diff: torch.Tensor, magnitude: torch.Tensor, floor: float) -> float | None:
    """The largest relative error over the elements whose expected magnitude is at
    least ``floor`` (the absolute tolerance): below it the absolute error is what
    is judged, and dividing by an expected value near 0 gives meaningless numbers
    (4e+37 for an expected 0). None when no element is that large."""
    small = magnitude < floor
    if bool(small.all()):
        return None
    return float((diff / magnitude.clamp_min_(floor)).masked_fill_(small, 0.0).max())


def _rel_text(max_rel: float | None, atol: float) -> str:
    where = "|expected| >= atol" if atol > 0 else "expected not 0"
    if max_rel is None:
        return f"no relative error (no element with {where})"
    return f"max rel error {max_rel:.6g} (where {where})"


def _first_index(mask: torch.Tensor) -> tuple[int, ...]:
    """The index of the first True element, without materialising all of them."""
    if mask.dim() == 0:
        return ()
    flat = int(mask.flatten().to(torch.uint8).argmax())
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), mask.shape))


def _describe(obj: Any) -> str:
    if isinstance(obj, torch.Tensor):
        return f"tensor{tuple(obj.shape)}"
    if isinstance(obj, (tuple, list)):
        return f"{type(obj).__name__} of {len(obj)} [" + ", ".join(_describe(x) for x in obj) + "]"
    if isinstance(obj, dict):
        return "dict {" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in obj.items()) + "}"
    return type(obj).__name__
