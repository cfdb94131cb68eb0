"""Outputs compared a piece at a time, so that checking an output costs no copy of it.

The audit compares outputs of gigabytes (KernelBench's level-1 elementwise
problems: 4096 x 393216 fp32, 6 GiB each). Compared whole, every comparison
makes temporaries several times the output's size (differences, magnitudes,
masks; float64 copies for the reference's error): an audit of such a problem
once held 134 GiB of an H200's 141. Here each pair of tensors is walked in
pieces (views along the leading dimensions, never copies of the whole), and
each piece goes through the judge's own ``compare_outputs``; temporaries are
then a few pieces' worth, a piece being at most 1/64 of the tensor (between
2**18 and 2**24 elements).

A comparison that fails reports the first piece that fails, named by its
index (``output[1024:2048]: 3 of 4194304 element(s) outside ...``, indices in
the message relative to that piece), instead of counts over the whole tensor.
Whether it fails, and the largest errors of one that passes, are the same as
for the whole tensor: the checks are elementwise.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import torch

from kbench.judge.trusted.compare import (  # noqa: F401 - where pieces are cut, for callers
    PIECE_MAX, PIECE_MIN, Comparison, compare_outputs, leaves, piece_indices, piece_limit, tolerance_for,
)

ZEROS = object()  # as ``actual``: an all-zero answer of the expected's structure, made piece by piece
_TINY = torch.finfo(torch.float64).tiny


def label(index: tuple[int | slice, ...]) -> str:
    return "".join(f"[{i}]" if isinstance(i, int) else f"[{i.start}:{i.stop}]" for i in index)


def tensors(obj: Any) -> list[torch.Tensor]:
    return [leaf for _, leaf in leaves(obj)[0] if isinstance(leaf, torch.Tensor)]


def compare(expected: Any, actual: Any, overrides: dict[str, dict[str, float]], *, cast: bool = False) -> Comparison:
    """``compare_outputs(expected, actual, ...)``, tensor by tensor and piece by piece.

    ``actual`` may be ``ZEROS`` (the all-zero answer: every tensor of
    ``expected`` as zeros, other leaves kept). With ``cast``, each piece of
    ``expected`` is first cast to the dtype and moved to the device of
    ``actual``'s (the float64 reference, as the answer in the tested dtype).
    Checks run in compare_outputs' order: structure, then per leaf its type,
    shape, dtype and device, then its values.
    """
    if actual is ZEROS:
        actual = expected
    expected_leaves, expected_shape = leaves(expected)
    actual_leaves, actual_shape = leaves(actual)
    if expected_shape != actual_shape or len(expected_leaves) != len(actual_leaves):
        return compare_outputs(expected, actual, {}, {}, overrides)  # fails on the structure, before any value
    zeros = actual is expected
    worst_abs, worst_rel = 0.0, None
    for (where, want), (_, got) in zip(expected_leaves, actual_leaves):
        if cast and isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor) and want.shape == got.shape:
            want_dtype, want_device = got.dtype, got.device
        else:
            want_dtype, want_device = getattr(want, "dtype", None), getattr(want, "device", None)
        same_kind = (
            isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor) and want.shape == got.shape
            and want_dtype == got.dtype and want_device == got.device
        )
        if not same_kind:  # a non-tensor leaf, or a tensor that fails before its values: compared whole
            result = compare_outputs(want, got, _device_of(want, want_device), _device_of(got), overrides)
            if not result.ok:
                return _relabel(result, where, ())
            continue
        for index in piece_indices(tuple(want.shape)):
            piece = want[index].to(dtype=want_dtype, device=want_device) if cast else want[index]
            answer = torch.zeros_like(piece) if zeros else got[index]
            result = compare_outputs(piece, answer, {}, {}, overrides)
            del piece, answer
            if not result.ok:
                return _relabel(result, where, index)
            worst_abs = max(worst_abs, result.max_abs_error or 0.0)
            if result.max_rel_error is not None:
                worst_rel = max(worst_rel or 0.0, result.max_rel_error)
    return Comparison(True, "ok", "all outputs match", worst_abs, worst_rel, kernelbench_ok=True)


def _device_of(leaf: Any, device: torch.device | None = None) -> dict[str, str]:
    return {"output": str(device or leaf.device)} if isinstance(leaf, torch.Tensor) else {}


def _relabel(result: Comparison, where: str, index: tuple[int | slice, ...]) -> Comparison:
    """A comparison of one leaf (or one piece of it) named by its place in the whole output."""
    detail = result.detail.replace("output", where + label(index), 1) if result.detail.startswith("output") else result.detail
    return replace(result, detail=detail)


def _bits(t: torch.Tensor) -> torch.Tensor:
    try:
        return t.detach().contiguous().reshape(-1).view(torch.uint8)
    except RuntimeError:
        return t.detach()


def bitwise_equal(a: Any, b: Any) -> bool:
    """The same structure and the very same bits (NaN equal to NaN), compared piece by piece."""
    (la, sa), (lb, sb) = leaves(a), leaves(b)
    if sa != sb or len(la) != len(lb):
        return False
    for (_, x), (_, y) in zip(la, lb):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or x.device != y.device:
                return False
            if not all(torch.equal(_bits(x[i]), _bits(y[i])) for i in piece_indices(tuple(x.shape))):
                return False
        elif x != y and not (x != x and y != y):  # NaN == NaN here
            return False
    return True


def error_stats(out: Any, out64: Any, overrides: dict[str, dict[str, float]]) -> dict[str, float]:
    """The error of ``out`` against ``out64`` (the float64 reference), and the largest
    share of the tolerance it uses, piece by piece.

    ``tolerance_fraction`` = max over elements of |out - out64| / (atol + rtol |out64|),
    in float64; elements where both are the same non-finite value are skipped;
    a non-finite value where the other differs, or an integer output that differs
    from the float64 run's, gives infinity.
    """
    max_abs = max_rel = fraction = 0.0
    for got, want in zip(tensors(out), tensors(out64)):
        floating = got.is_floating_point() or got.is_complex()
        tol = tolerance_for(got.dtype, overrides)
        for index in piece_indices(tuple(got.shape)):
            g, w = got[index], want[index].to(got.device)
            if not floating:
                if not torch.equal(g, w.to(g.dtype)):
                    fraction = math.inf
                continue
            if g.is_complex():
                g, w = torch.view_as_real(g), torch.view_as_real(w)
            g, w = g.to(torch.float64), w.to(torch.float64)
            both = torch.isfinite(g) & torch.isfinite(w)
            if not bool(both.all()):
                same = (g == w) | (torch.isnan(g) & torch.isnan(w))
                if not bool((same | both).all()):
                    fraction = math.inf
                g, w = g[both], w[both]
            del both
            if g.numel() == 0:
                continue
            diff = (g - w).abs_()
            del g
            magnitude = w.abs()
            del w
            max_abs = max(max_abs, float(diff.max()))
            max_rel = max(max_rel, float((diff / magnitude.clamp_min(_TINY)).max()))
            allowed = magnitude.mul_(tol["rtol"]).add_(tol["atol"]).clamp_min_(_TINY)
            fraction = max(fraction, float(diff.div_(allowed).max()))  # 0 where the difference is 0
    return {"max_abs_error": max_abs, "max_rel_error": max_rel, "tolerance_fraction": fraction}
