"""Comparing a candidate's outputs with the reference's, outside both processes.

Checks run in order and the first failure is the reason: structure (same
nesting of tuples, lists and dicts), then per tensor its type, shape, dtype and
device, then finiteness (finite wherever the reference is finite; NaN and
infinities only where the reference has the same), then values. Integer and
boolean outputs must match exactly. This runs in the reference's process, on
its device (see ``worker.compare_with_saved``), never in the candidate's.

Floating-point values are judged by one of two criteria (``CRITERIA``):

- ``kernelbench``: within the problem's tolerance of the reference's output,
  ``|actual - expected| <= atol + rtol * |expected|`` (KernelBench's constant
  for its files; a kbench problem's own ``KBENCH_TOLERANCE``);
- ``truth`` (the default): against the float64 truth (the problem's Model in
  float64 on the same inputs, kbench.judge.trusted.truth), within the problem's
  tolerance plus ``multiple`` times the reference's own error against that
  truth, where errors are scaled by ``max(|truth|, mean |truth|)``
  (``truth_values``). A candidate the ``kernelbench`` criterion accepts is
  accepted too (the allowance contains the reference's error, and the
  multiple is at least 2), so the truth only ever forgives an honest
  summation order the reference's float32 output would have rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

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
# How many times the reference's own (scaled) error against the float64 truth a candidate
# may make beyond atol and rtol under the truth criterion (a problem may set its own:
# KBENCH_TOLERANCE = {"float32": {"multiple": ...}}). Measured on the CPU with
# benchmarks/truth_orders.py (docs/measurements/2026-12-05-truth-criterion-cpu.md): a float32 product summed one k at
# a time
# makes 3.4x (K = 4096) to 7.8x (K = 16384) the scaled error of the blocked library
# product, tiles and split k 0.7-1.3x; a float32 sum one term after another 10-83x that
# of PyTorch's cascade sum, which rtol mostly covers. With 32, every honest order used at
# most 0.28 of its allowance, and bfloat16 or float16-rounded inputs 18-173 times it. A
# 16-bit output's error is its own rounding whatever the order (an honest kernel
# accumulates in float32): 2 there.
DEFAULT_MULTIPLE = 32.0
MULTIPLES = {"float16": 2.0, "bfloat16": 2.0}
# A reference farther than this from the float64 truth (scaled error) is not off by rounding: the model
# draws random numbers, or takes another path in float64. That truth is not used (the reference's output
# judges), or a multiple of its error would let anything through. float32's: about 8000 units in the last
# place (a product summed over 16384 terms is 2e-6 from it); 16-bit's: 20 times the rounding of one value.
MOST_REFERENCE_ERROR = {"float16": 0.1, "bfloat16": 0.1}
DEFAULT_MOST_REFERENCE_ERROR = 1e-3
EXACT = {"atol": 0.0, "rtol": 0.0}
MIN_MULTIPLE = 2.0  # at least 1 + rtol: what the reference-side criterion accepts, the truth's accepts too
CRITERIA = {
    "truth": "against the float64 truth, within the tolerance plus a multiple of the reference's own error",
    "kernelbench": "against the reference's output, within the problem's tolerance (KernelBench's constant)",
}
DEFAULT_CRITERION = "truth"
_TINY = torch.finfo(torch.float64).tiny


class TruthUnavailable(Exception):
    """No float64 truth for this call (too large, out of memory, the model does not run in
    float64); the reason is recorded and the reference's output judges alone."""


def check_criterion(name: str) -> str:
    if name not in CRITERIA:
        raise ValueError(f"unknown correctness criterion {name!r}; choose from {', '.join(CRITERIA)}")
    return name


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
    max_abs_error: float | None = None  # against the reference's output
    max_rel_error: float | None = None
    criterion: str = "kernelbench"  # the criterion that decided ``ok`` (``truth`` only where a truth was computed)
    kernelbench_ok: bool | None = None  # whether the reference's output and the problem's tolerance accept it
    truth: dict[str, Any] | None = None  # errors against the float64 truth (``truth_values``), or {"unavailable": why}

    def errors(self) -> dict[str, Any]:
        """What a verdict's trial keeps of the comparison."""
        return {"check": self.check, "detail": self.detail, "max_abs_error": self.max_abs_error,
                "max_rel_error": self.max_rel_error, "criterion": self.criterion,
                "kernelbench_ok": self.kernelbench_ok, "truth": self.truth}


class TruthRecord:
    """What an evaluation's checks found, for its verdict: whether the ``kernelbench``
    criterion accepted every one (the KernelBench-compatible column of scores), how many
    the truth judged, the worst errors against it, and why it was unavailable where it was."""

    def __init__(self) -> None:
        self.checks = self.by_truth = 0
        self.kernelbench_ok = True
        self.worst: dict[str, float] = {}
        self.unavailable: list[str] = []

    def add(self, comparison: dict[str, Any]) -> None:
        """One check's comparison, as the reference answered it (``Comparison`` as a dict)."""
        self.checks += 1
        kernelbench = comparison.get("kernelbench_ok")
        self.kernelbench_ok &= bool(comparison.get("ok") if kernelbench is None else kernelbench)
        self.by_truth += comparison.get("criterion") == "truth"
        for key, value in (comparison.get("truth") or {}).items():
            if key == "unavailable":
                self.unavailable += [value] if value not in self.unavailable else []
            elif isinstance(value, (int, float)):
                self.worst[key] = max(self.worst.get(key, 0.0), float(value))

    def verdict_fields(self, correct: bool, correctness: str) -> dict[str, Any]:
        truth = {**self.worst, "checks": self.checks, "judged_by_truth": self.by_truth}
        return {"correctness": correctness, "kernelbench_correct": correct and self.kernelbench_ok,
                "truth": {**truth, "unavailable": self.unavailable} if self.unavailable else truth}


def leaves(obj: Any, path: str = "output") -> tuple[list[tuple[str, Any]], list[str]]:
    """(path, leaf) pairs and a structural signature of a nested output.

    Walked with an explicit stack: a recursive closure would be a reference
    cycle holding every leaf (gigabytes of tensors) until the garbage collector
    happens to run, and every call's output and inputs are walked."""
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
    truth: Callable[[], Any] | None = None,
    truth_on_pass: bool = True,
) -> Comparison:
    """Compare two (CPU-loaded) outputs; devices are as each process reported them.

    With ``truth`` (a function giving the float64 truth of ``expected``'s call, or raising
    TruthUnavailable), floating-point values are judged by the truth criterion; it is called
    once, at the first floating-point tensor whose other checks pass. Without it, or when it
    raises, by the reference's output alone (``kernelbench``, with the reason recorded).
    Without ``truth_on_pass`` the truth is asked for only where the reference's output rejects a
    value: an output the reference's criterion accepts, the truth criterion accepts too (its bound
    holds the reference-side tolerance and more), so the float64 model then decides nothing and
    would only be measured for the record; timed calls' checks skip it (on the H100 it was most of
    a large problem's checks: docs/correctness.md)."""
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
    judge = _TruthJudge(truth, expected_shape, truth_on_pass)
    for (where, want), (_, got) in zip(expected_leaves, actual_leaves):
        if not isinstance(want, torch.Tensor):
            if type(got) is not type(want) or got != want:
                return judge.failed(Comparison(False, "value", f"{where}: expected {want!r}, got {got!r}"))
            continue
        if not isinstance(got, torch.Tensor):
            return judge.failed(Comparison(
                False, "type", f"{where}: expected a tensor, got {type(got).__name__}"
            ))
        if got.shape != want.shape:
            return judge.failed(Comparison(
                False, "shape", f"{where}: expected shape {tuple(want.shape)}, got {tuple(got.shape)}"
            ))
        if got.dtype != want.dtype:
            return judge.failed(Comparison(
                False, "dtype", f"{where}: expected dtype {dtype_name(want.dtype)}, got {dtype_name(got.dtype)}"
            ))
        if expected_devices.get(where) != actual_devices.get(where):
            return judge.failed(Comparison(
                False,
                "device",
                f"{where}: expected device {expected_devices.get(where)}, got {actual_devices.get(where)}",
            ))
        tol = tolerance_for(want.dtype, overrides)
        result = _compare_values(where, want, got, tol)
        if result.check != "finite" and (want.is_floating_point() or want.is_complex()):
            result = judge.leaf(where, want, got, tol, result)
        if not result.ok:
            return judge.failed(result)
        worst_abs = max(worst_abs, result.max_abs_error or 0.0)
        if result.max_rel_error is not None:
            worst_rel = max(worst_rel or 0.0, result.max_rel_error)
    return judge.failed(Comparison(True, "ok", "all outputs match", worst_abs, worst_rel))


class _TruthJudge:
    """The truth criterion across one output's leaves: the truth asked for once, each
    floating-point leaf judged against its float64 twin, the errors gathered for the record."""

    def __init__(self, truth: Callable[[], Any] | None, shape: list[str], on_pass: bool = True):
        self.truth, self.shape, self.on_pass = truth, shape, on_pass
        self.leaves: dict[str, Any] | None = None
        self.unavailable: str | None = None
        self.kernelbench_ok = True
        self.record: dict[str, Any] = {}

    def _truth_of(self, where: str) -> Any:
        if self.leaves is None and self.unavailable is None:
            try:
                found, shape = leaves(self.truth())
            except TruthUnavailable as why:
                self.unavailable = str(why)
            except Exception as exc:  # noqa: BLE001 - the problem's code again: never the reference's failure here
                self.unavailable = f"the float64 truth failed ({type(exc).__name__}: {str(exc)[:300]})"
            else:
                if shape != self.shape:
                    self.unavailable = "the float64 model's output has another structure"
                else:
                    self.leaves = dict(found)
        return None if self.leaves is None else self.leaves.get(where)

    def leaf(self, where: str, want: torch.Tensor, got: torch.Tensor, tol: dict[str, float],
             kernelbench: Comparison) -> Comparison:
        """The leaf's verdict: the reference-side one, or the truth's where a truth is known."""
        self.kernelbench_ok &= kernelbench.ok
        if self.truth is None or (kernelbench.ok and not self.on_pass):
            return kernelbench
        true = self._truth_of(where)
        if not isinstance(true, torch.Tensor) or true.shape != want.shape:
            if self.unavailable is None:
                self.unavailable = f"{where}: the float64 model's output is not a tensor of its shape"
            return kernelbench
        if true.dtype not in (torch.float64, torch.complex128):  # the model fixes its own dtype there
            self.unavailable = f"{where}: the float64 model's output is {dtype_name(true.dtype)}, not a truth"
            return kernelbench
        try:
            errors, bad = truth_values(want, got, true, tol)
        except (RuntimeError, MemoryError) as exc:  # out of memory for the float64 pieces, above all
            errors, bad = {"unavailable": f"the comparison with the truth failed ({type(exc).__name__})"}, None
        if errors.get("unavailable"):
            self.unavailable = f"{where}: {errors['unavailable']}"
            return kernelbench
        for key, value in errors.items():
            self.record[key] = max(self.record.get(key, 0.0), value)
        if kernelbench.ok or bad is None:
            return Comparison(True, "ok", "", kernelbench.max_abs_error, kernelbench.max_rel_error)
        count, index, expected_value, got_value = bad
        return Comparison(
            False, "values",
            f"{where}: {count} of {want.numel()} element(s) off the float64 truth by more than atol={tol['atol']:g} "
            f"rtol={tol['rtol']:g} plus {errors['multiple']:g} x the reference's own error; max abs error "
            f"{errors['candidate_error']:.6g} against the truth (the reference's: {errors['reference_error']:.6g}), "
            f"scaled {errors['candidate_scaled_error']:.3g} (the reference's: {errors['reference_scaled_error']:.3g}) "
            f"(first at {index}: truth {expected_value:.8g}, got {got_value:.8g}); against the reference's "
            f"output: {kernelbench.detail.partition(': ')[2]}",
            kernelbench.max_abs_error, kernelbench.max_rel_error)

    def failed(self, result: Comparison) -> Comparison:
        """``result`` with the criterion that decided it (``truth`` where a truth judged a leaf),
        whether the reference-side criterion accepts the output, and the errors against the truth."""
        truth = dict(self.record) if self.record else None
        if self.unavailable is not None:
            truth = {**(truth or {}), "unavailable": self.unavailable}
        return Comparison(result.ok, result.check, result.detail, result.max_abs_error, result.max_rel_error,
                          "truth" if self.record else "kernelbench", self.kernelbench_ok and result.ok, truth)


def truth_values(want: torch.Tensor, got: torch.Tensor, true: torch.Tensor, tol: dict[str, float]
                 ) -> tuple[dict[str, Any], tuple[int, tuple[int, ...], float, float] | None]:
    """The truth criterion on one tensor: the errors of the reference (``want``) and of the
    candidate (``got``) against the float64 ``true``, and None, or the failure: (how many
    elements, the first's index, the truth and the candidate's value there).

    Over the elements where the reference and the truth are finite (elsewhere the finiteness
    check against the reference decides), with ``m = max(|true|, mean |true|)``:
    ``scaled error = max |x - true| / m``, and the candidate passes where
    ``|got - true| <= atol + rtol |true| + multiple * (the reference's scaled error) * m``.
    The scale ``m`` holds a value near 0, whose rounding error comes from the large terms
    that cancelled there, to the output's typical size, and every other value to its own.
    ``share`` is the largest part of that allowance the candidate uses (at most 1 to pass).
    In float64, a piece at a time (``piece_indices``): no temporary of the whole output, and
    nothing written in place into a piece, which may be the caller's own tensor."""
    multiple = max(float(tol.get("multiple", MULTIPLES.get(dtype_name(want.dtype), DEFAULT_MULTIPLE))), MIN_MULTIPLE)
    if want.is_complex():
        want, got, true = torch.view_as_real(want), torch.view_as_real(got), torch.view_as_real(true)
    shape = tuple(want.shape)

    def pieces() -> Iterator[tuple[tuple[int | slice, ...], torch.Tensor, torch.Tensor, torch.Tensor]]:
        for index in piece_indices(shape):
            w = want[index].to(torch.float64)
            t = true[index].to(device=w.device, dtype=torch.float64)
            yield index, w, t, torch.isfinite(w) & torch.isfinite(t)

    total, count = 0.0, 0
    for _, w, t, finite in pieces():
        if bool((torch.isfinite(w) & ~torch.isfinite(t)).any()):
            return {"unavailable": "the float64 model's output is not finite where the reference's is"}, None
        total += float(t.abs().masked_fill_(~finite, 0.0).sum())
        count += int(finite.sum())
    errors: dict[str, Any] = {"candidate_error": 0.0, "reference_error": 0.0, "candidate_scaled_error": 0.0,
                              "reference_scaled_error": 0.0, "share": 0.0, "multiple": multiple}
    if count == 0:
        return errors, None
    scale = max(total / count, _TINY)
    for _, w, t, finite in pieces():
        error = (w - t).abs_().masked_fill_(~finite, 0.0)
        errors["reference_error"] = max(errors["reference_error"], float(error.max()))
        errors["reference_scaled_error"] = max(errors["reference_scaled_error"],
                                               float(error.div_(t.abs().clamp_min_(scale)).max()))
    most = MOST_REFERENCE_ERROR.get(dtype_name(want.dtype), DEFAULT_MOST_REFERENCE_ERROR)
    if errors["reference_scaled_error"] > most:
        return {"unavailable": f"the reference is {errors['reference_scaled_error']:.3g} (scaled) from the float64 "
                               f"model's output, more than rounding ({most:g}): not a truth"}, None
    bad: list[Any] = [0, None, 0.0, 0.0]
    for index, w, t, finite in pieces():
        g = got[index].to(torch.float64)
        error = (g - t).abs_().masked_fill_(~finite, 0.0)
        m = t.abs().clamp_min_(scale)
        allowed = t.abs().mul_(tol["rtol"]).add_(tol["atol"]).add_(m.mul(multiple * errors["reference_scaled_error"]))
        errors["candidate_error"] = max(errors["candidate_error"], float(error.max()))
        errors["share"] = max(errors["share"], float(error.div(allowed.clamp_min(_TINY)).max()))
        errors["candidate_scaled_error"] = max(errors["candidate_scaled_error"], float(error.div_(m).max()))
        beyond = (g - t).abs_().masked_fill_(~finite, 0.0) > allowed
        if bool(beyond.any()):
            bad[0] += int(beyond.sum())
            if bad[1] is None:
                local = _first_index(beyond)
                bad[1:] = [_global_index(index, local), float(t[local]), float(g[local])]
    return errors, (tuple(bad) if bad[0] else None)


def _global_index(index: tuple[int | slice, ...], local: tuple[int, ...]) -> tuple[int, ...]:
    """A piece's element's index in the whole tensor (``piece_indices``: integers, then at most one slice)."""
    fixed = [i for i in index if isinstance(i, int)]
    cut = [i for i in index if isinstance(i, slice)]
    if cut:
        return (*fixed, cut[0].start + local[0], *local[1:])
    return (*fixed, *local)


PIECE_SHARE = 64  # a piece is at most this share of its tensor...
PIECE_MIN, PIECE_MAX = 1 << 18, 1 << 24  # ...within these bounds, in elements


def piece_limit(numel: int) -> int:
    return max(PIECE_MIN, min(PIECE_MAX, numel // PIECE_SHARE))


def piece_indices(shape: tuple[int, ...], limit: int | None = None) -> Iterator[tuple[int | slice, ...]]:
    """Indices that cut a tensor of ``shape`` into views of at most ``limit`` elements
    (whole rows of the leading dimension where one fits, else one row at a time, cut further)."""
    numel = math.prod(shape)
    limit = limit or piece_limit(numel)
    if numel <= limit or not shape:
        yield ()
        return
    inner = numel // shape[0]
    if inner <= limit:
        step = limit // inner
        for start in range(0, shape[0], step):
            yield (slice(start, min(start + step, shape[0])),)
    else:
        for row in range(shape[0]):
            for rest in piece_indices(shape[1:], limit):
                yield (row, *rest)


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
