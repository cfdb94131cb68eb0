"""What a plain output is: data computed by the time its call returned.

Every judged call's output is inspected inside its clock (``timing.TimedCall``),
before it is packed for the reference: a tensor subclass or any
other object standing in for data could do its computing when first touched,
after the clock stopped. Only exact types are read here, so nothing the
candidate defined runs while the output is inspected.
"""

from __future__ import annotations

from typing import Any

import torch

_Tensor, _strided = torch.Tensor, torch.strided
_RETURN_TYPES = frozenset(v for v in vars(torch.return_types).values() if isinstance(v, type))
_SCALARS = frozenset({type(None), bool, int, float, complex, str})
_CONTAINER_PROTOCOL = ("__iter__", "__getitem__", "__len__", "__getattribute__", "__getattr__", "__class_getitem__")


def not_plain(out: Any) -> str | None:
    """Why ``out`` is not plain data, or None: every tensor exactly a strided
    ``torch.Tensor`` (no subclass, no lazy wrapper), held in plain tuples,
    lists, dicts (or PyTorch's named return tuples) with plain scalars beside
    them. Nothing here touches a tensor's data or calls the candidate's code:
    only exact types are read."""
    pending: list[tuple[str, Any]] = [("output", out)]
    while pending:
        where, node = pending.pop()
        kind = type(node)
        if kind is _Tensor:
            if node.layout is not _strided:
                return f"{where} is a {node.layout} tensor, not a strided one"
        elif kind is list:
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(list.__iter__(node)))
        elif kind is tuple or kind in _RETURN_TYPES or _plain_tuple(kind):
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(tuple.__iter__(node)))
        elif kind is dict:
            for key in dict.__iter__(node):
                if type(key) not in _SCALARS:
                    return f"{where} has a key of type {type(key).__name__}"
                pending.append((f"{where}[{key!r}]", dict.__getitem__(node, key)))
        elif kind not in _SCALARS:
            return f"{where} is a {kind.__name__}, not a torch.Tensor"
    return None


def _plain_tuple(kind: type) -> bool:
    """A tuple subclass that only names its fields (a namedtuple): nothing in its
    classes changes how it is iterated, indexed or measured."""
    if not issubclass(kind, tuple) or type(kind) is not type:
        return False
    return not any(name in vars(base) for base in kind.__mro__ if base not in (tuple, object)
                   for name in _CONTAINER_PROTOCOL)
