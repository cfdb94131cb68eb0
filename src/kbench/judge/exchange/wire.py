"""The worker's own JSON on its pipes, beyond the reach of the ``json`` module.

A candidate's process holds the worker, and the ``json`` module in it is the
candidate's to rewrite: ``json.dumps`` replaced, ``JSONEncoder.iterencode``
or ``json.encoder.c_make_encoder`` patched, and a worker that wrote through
them would report whatever the candidate liked (its findings dropped, its
clock scaled), including the finding that said ``json`` was patched. So the
worker writes its answers with the encoder here, which uses only built-in
types' own methods and the C string escaper captured when this module is
imported (before any solution), and reads its orders with a C scanner made
then. The runtime guard watches this module, ``json`` and their classes all
the same (``patched-function``); the judge still believes nothing the worker
says that another process does not confirm (docs/guard.md).
"""

from __future__ import annotations

import json
import json.decoder
import json.encoder
from typing import Any

_escape = json.encoder.encode_basestring_ascii  # the C function where CPython has it
_scan = json.decoder.JSONDecoder().scan_once  # a scanner made now, holding its own parse functions
_float_repr, _int_repr = float.__repr__, int.__repr__
_INFINITY = float("inf")


def encode(value: Any) -> str:
    """``value`` as one line of JSON, as ``json.dumps`` would write it (non-finite
    floats as NaN/Infinity, tuples as lists, non-string keys as strings)."""
    parts: list[str] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if type(item) is _Text:
            parts.append(item.text)
        elif item is None:
            parts.append("null")
        elif item is True:
            parts.append("true")
        elif item is False:
            parts.append("false")
        elif isinstance(item, str):
            parts.append(_escape(item))
        elif isinstance(item, int):
            parts.append(_int_repr(item))
        elif isinstance(item, float):
            parts.append(_number(item))
        elif isinstance(item, (list, tuple)):
            pending.append(_Text("]"))
            for index in range(len(item) - 1, -1, -1):
                pending.append(item[index])
                if index:
                    pending.append(_Text(", "))
            parts.append("[")
        elif isinstance(item, dict):
            pending.append(_Text("}"))
            entries = list(item.items())
            for index in range(len(entries) - 1, -1, -1):
                key, entry = entries[index]
                pending.append(entry)
                pending.append(_Text(_key(key) + ": "))
                if index:
                    pending.append(_Text(", "))
            parts.append("{")
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
    return "".join(parts)


def decode(line: str) -> Any:
    """One line of JSON from the judge."""
    text = line.strip()
    try:
        value, end = _scan(text, 0)
    except StopIteration as stop:  # how a scanner says where the text stopped being JSON
        raise ValueError(f"not JSON at character {stop.value}") from None
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


class _Text:
    """Punctuation queued between the values of a container."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _number(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return _float_repr(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _escape(key)
    if key is None or isinstance(key, (bool, int, float)):
        return _escape(_scalar_key(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _scalar_key(key: Any) -> str:
    if key is None:
        return "null"
    if key is True:
        return "true"
    if key is False:
        return "false"
    return _int_repr(key) if isinstance(key, int) else _number(key)
