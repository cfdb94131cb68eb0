"""CUDA-graph timing (``kbench eval --cuda-graph``): a call captured once into a
graph and replayed with each call's inputs copied into the captured buffers, for
problems made of many small launches, where launch overhead would decide the score.
Runs inside worker processes, watched by the runtime guard like timing.py.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

import torch

# Captured when the worker imports this module, before any candidate code (as timing.py's clocks).
_CudaGraph, _capture_graph, _replay_graph = torch.cuda.CUDAGraph, torch.cuda.graph, torch.cuda.CUDAGraph.replay


class GraphError(RuntimeError):
    """The call cannot be timed as a CUDA graph (its arguments change shape or kind)."""


class GraphedCall:
    """``forward`` captured once into a CUDA graph and replayed, for problems whose
    time is mostly the launch of many small kernels.

    The first ``stage`` runs ``forward`` a few times on a side stream (so that
    libraries allocate their workspaces outside the capture), then captures
    one call on those inputs; every later ``stage`` copies the new inputs into
    the captured ones (untimed) and returns the replay. The replay's output
    is the graph's own static buffer, overwritten by the next replay. What a
    replay computes is what the capture recorded, so a forward that behaves
    differently while captured is caught by checking a replay's output on
    inputs it has not seen (the judge's checked call does), and
    ``capture_context`` (the worker's op recorder, entered once, around the
    capture) sees the operations the graph holds.
    """

    WARMUP_CALLS = 3

    def __init__(self, forward: Callable[..., Any], device: torch.device,
                 capture_context: contextlib.AbstractContextManager[Any] | None = None):
        if device.type != "cuda":
            raise GraphError(f"CUDA-graph timing needs a CUDA device, not {device}")
        self.forward = forward
        self.device = device
        self.capture_context = capture_context
        self.graph: Any = None
        self.static_args: list[Any] = []
        self.output: Any = None

    def stage(self, args: list[Any]) -> Callable[[], Any]:
        if self.graph is None:
            self._capture(args)
        else:
            _copy_into(self.static_args, list(args), "the arguments")
        return self.replay

    def replay(self) -> Any:
        _replay_graph(self.graph)
        return self.output

    def _capture(self, args: list[Any]) -> None:
        current = torch.cuda.current_stream(self.device)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            for _ in range(self.WARMUP_CALLS):
                self.forward(*args)
        current.wait_stream(side)
        graph = _CudaGraph()
        with self.capture_context or contextlib.nullcontext():
            with _capture_graph(graph):
                self.output = self.forward(*args)
        self.graph, self.static_args = graph, list(args)


class StaticInputs:
    """Under CUDA-graph timing, the arguments of a column that replays CUDA
    graphs itself (reduce-overhead, max-autotune, the cudagraphs backend),
    staged on the terms ``GraphedCall`` gives eager and candidates.

    Such a column copies arguments at new addresses into its graph's own
    buffers inside every call; here the first call's tensors become fixed
    buffers, marked as static addresses (``torch._dynamo.mark_static_address``)
    so that inductor's graphs read them where they are, and every later call's
    fresh inputs are copied into them outside the timed region. (The
    ``cudagraphs`` backend treats only parameters as static and still copies.)
    """

    def __init__(self, forward: Callable[..., Any]):
        self.forward = forward
        self.static_args: list[Any] | None = None

    def stage(self, args: list[Any]) -> Callable[[], Any]:
        if self.static_args is None:
            import torch._dynamo  # the column compiled with it already

            for arg in args:
                if isinstance(arg, torch.Tensor):
                    torch._dynamo.mark_static_address(arg)
            self.static_args = list(args)
        else:
            _copy_into(self.static_args, list(args), "the arguments")
        return functools.partial(self.forward, *self.static_args)


def _copy_into(static: Any, new: Any, where: str) -> None:
    """Copy ``new`` into the captured ``static`` arguments, which must have its structure."""
    if isinstance(static, torch.Tensor) and isinstance(new, torch.Tensor):
        if static.shape != new.shape or static.dtype != new.dtype:
            raise GraphError(f"{where}: {tuple(new.shape)} {new.dtype}, where the graph was captured with "
                             f"{tuple(static.shape)} {static.dtype}")
        static.copy_(new)
    elif isinstance(static, (list, tuple)) and isinstance(new, (list, tuple)) and len(static) == len(new):
        for index, (s, n) in enumerate(zip(static, new)):
            _copy_into(s, n, f"{where}[{index}]")
    elif isinstance(static, torch.Tensor) or isinstance(new, torch.Tensor) or type(static) is not type(new) \
            or static != new:
        raise GraphError(f"{where} changed from {static!r} to {new!r}: a graph replays the captured call only")
