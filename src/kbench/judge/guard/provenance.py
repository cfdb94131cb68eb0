"""What an operation computes when its family name says "data movement": the
qualifiers the operation recorder (``runtime.OpRecorder``) adds to a name.

Moving data with computed addresses (``index``, ``masked_fill``, ``scatter``,
``index_put``) is glue when the addresses come from the problem (token ids,
indices the reference is given), from shapes (``arange``, ``ones(...).tril()``)
or from a kernel's own output. It is arithmetic on values when

- it accumulates: ``index_put(accumulate=True)`` and ``scatter(reduce=...)``
  add or multiply what they move (a sum over a dimension as a scatter-add).
  Recorded as ``index_put[accumulate]``, ``scatter[reduce=add]``;
- its index or mask was converted, inside forward, from floating-point
  values: a float cast to an integer or bool (truncation, a test against
  zero) or a tensor's bits read as another dtype (``x.view(torch.uint8)``).
  A table looked up by such keys, or a mask made of them, computes a function
  of those values (a ReLU as a lookup of each float's sign byte, then a
  ``masked_fill``). Recorded as ``index[by value]``, ``masked_fill[by value]``.

Keys are followed through every operation: whatever an operation makes from a
key is a key (a slice of it, a table looked up with it), and whatever it
makes from constants alone is a constant (tensors forward builds from value
factories: ``ones``, ``arange``, ``tensor([...])``), whose casts are not keys
(a causal mask ``ones(n, n).tril().bool()``). Parameters, buffers, inputs and
a kernel's outputs are neither: their casts to integers or bools are keys.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

# Factories whose values are fixed by their arguments (shapes, scalars, literals).
VALUE_FACTORIES = frozenset({
    "zeros", "ones", "full", "arange", "eye", "linspace", "logspace", "scalar_tensor", "tril_indices",
    "triu_indices", "zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full", "lift_fresh",
    "lift_fresh_copy", "fill", "zero",
})
# Data movement whose addresses come from an argument named in KEY_ARGUMENTS.
LOOKUPS = frozenset({
    "index", "_unsafe_index", "index_select", "gather", "take", "embedding", "masked_fill", "masked_scatter",
    "masked_select", "index_put", "_index_put_impl", "_unsafe_index_put", "scatter", "repeat_interleave", "put",
    "index_fill", "index_copy", "take_along_dim",
})
KEY_ARGUMENTS = ("index", "indices", "mask", "repeats")
ACCUMULATING = frozenset({"index_put", "_index_put_impl", "_unsafe_index_put", "put"})  # with accumulate=True
CASTS = frozenset({"_to_copy", "to", "copy", "_copy_from"})
# Allocations whose values nobody chose yet (a kernel writes them): never constants.
UNWRITTEN = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted", "resize", "set",
    "resize_as",
})


def tensors(value: Any) -> list[torch.Tensor]:
    """The tensors in an argument or a result (lists and tuples opened)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors(item)]
    return []


def _bound(func: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    names = [argument.name for argument in func._schema.arguments]
    return {**dict(zip(names, args)), **kwargs}


def _numeric(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point or dtype.is_complex


class _Marks:
    """Tensors marked by identity (a view's mark is its base's too), held weakly."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    def __contains__(self, tensor: torch.Tensor) -> bool:
        return any(self._held(t) for t in (tensor, tensor._base) if t is not None)

    def _held(self, tensor: torch.Tensor) -> bool:
        ref = self._refs.get(id(tensor))
        return ref is not None and ref() is tensor

    def add(self, tensor: torch.Tensor) -> None:
        for t in (tensor, tensor._base):
            if t is not None:
                self._refs[id(t)] = weakref.ref(t)

    def discard(self, tensor: torch.Tensor) -> None:
        for t in (tensor, tensor._base):
            if t is not None and self._held(t):
                del self._refs[id(t)]


class Provenance:
    """Follows keys and constants through one recorded forward, op by op."""

    def __init__(self) -> None:
        self.keys = _Marks()
        self.constants = _Marks()

    def qualified(self, name: str, func: Any, args: tuple, kwargs: dict, out: Any) -> str:
        """``name``, qualified where the operation computes; the marks updated for its results."""
        base = name.removesuffix("_")
        bound = _bound(func, args, kwargs)
        qualifier = None
        if base in ACCUMULATING and bound.get("accumulate"):
            qualifier = "accumulate"
        elif base == "scatter" and bound.get("reduce") is not None:
            qualifier = f"reduce={bound['reduce']}"
        elif base in LOOKUPS and any(t in self.keys for arg in KEY_ARGUMENTS for t in tensors(bound.get(arg))):
            qualifier = "by value"
        self._mark(base, func, bound, tensors(list(args) + list(kwargs.values())), tensors(out))
        return f"{base}[{qualifier}]" if qualifier else name

    def _mark(self, base: str, func: Any, bound: dict[str, Any], inputs: list[torch.Tensor],
              outputs: list[torch.Tensor]) -> None:
        constant = base in VALUE_FACTORIES or (
            base not in UNWRITTEN and bool(inputs) and all(t in self.constants for t in inputs))
        keyed = not constant and (any(t in self.keys for t in inputs) or self._converts(base, func, bound, outputs))
        for out in outputs:
            if constant:
                self.constants.add(out)
                self.keys.discard(out)
            else:
                self.constants.discard(out)
                if keyed:
                    self.keys.add(out)

    @staticmethod
    def _converts(base: str, func: Any, bound: dict[str, Any], outputs: list[torch.Tensor]) -> bool:
        """Floating-point values cast to integers or bools, or any tensor's bits read as another dtype."""
        source = bound.get("src") if base == "copy" else bound.get("self")
        if not isinstance(source, torch.Tensor) or not outputs:
            return False
        if base == "view" and func._overloadname == "dtype":
            return outputs[0].dtype != source.dtype
        return base in CASTS and _numeric(source.dtype) and not _numeric(outputs[0].dtype)
