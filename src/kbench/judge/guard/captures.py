"""Kernels a solution captured into a CUDA graph, so that a replay counts as launching them.

A solution that captures its own kernels into a ``torch.cuda.CUDAGraph`` in
``__init__`` (or in an early call) and replays the graph in ``forward`` launches
its kernels through the replay: at run time nothing but ``replay`` is called,
and the launch watch (``runtime.LaunchWatch``) alone read that as "no kernel of
its own" (three honest corpus files flagged on the H200, 2026-12-01). So the
candidate's worker, before any solution code runs, wraps the graph class's
``capture_begin`` and ``capture_end``: between them a launch watch is entered,
and what it saw is kept for that graph object. A replay of a graph that
captured the solution's own launches is then one of them
(``replayed_launches``); a graph of PyTorch operations alone counts for nothing.

Installed only in the candidate's worker (``install``), once, before the guard's
snapshot; a candidate that undoes the wrappers only loses the credit.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

import torch

_CAPTURED: "weakref.WeakKeyDictionary[Any, frozenset[str]]" = weakref.WeakKeyDictionary()
_ACTIVE: dict[int, Any] = {}  # id(graph) -> its launch watch while capturing


def install(watch_factory: Callable[[], Any]) -> None:
    """Wrap ``torch.cuda.CUDAGraph``'s capture methods (idempotent). ``watch_factory``
    makes a launch watch (a context manager with a ``launched`` set)."""
    graph_class = torch.cuda.CUDAGraph
    if getattr(graph_class.capture_begin, "__kbench_capture__", False):
        return
    begin, end = graph_class.capture_begin, graph_class.capture_end

    @functools.wraps(begin)
    def capture_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
        watch = watch_factory()
        watch.__enter__()
        _ACTIVE[id(self)] = watch
        try:
            return begin(self, *args, **kwargs)
        except BaseException:
            _stop(self)
            raise

    @functools.wraps(end)
    def capture_end(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return end(self, *args, **kwargs)
        finally:
            _stop(self)

    capture_begin.__kbench_capture__ = True  # type: ignore[attr-defined]
    graph_class.capture_begin, graph_class.capture_end = capture_begin, capture_end


def _stop(graph: Any) -> None:
    watch = _ACTIVE.pop(id(graph), None)
    if watch is None:
        return
    watch.__exit__(None, None, None)
    try:
        _CAPTURED[graph] = frozenset(watch.launched)
    except TypeError:  # not weakly referenceable: then nothing is remembered for it
        pass


def replayed_launches(graph: Any) -> frozenset[str]:
    """The solution's own launches ``graph`` captured (empty: none, or not a graph captured here)."""
    try:
        return _CAPTURED.get(graph, frozenset())
    except TypeError:
        return frozenset()


def is_replay(code: Any) -> bool:
    """Whether ``code`` is the graph class's own ``replay`` (a profile hook's frame code)."""
    return code is getattr(torch.cuda.CUDAGraph.replay, "__code__", None)
