"""Persisting L2 lines: state the judge's cache flush would not clear (issue 32, item 7).

From compute capability 8.0 a context can set part of the L2 aside for
persisting accesses (``cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize)``, a
limit of the context: ``cuCtxSetLimit``) and mark accesses persisting (a stream's
or a launch's access-policy window, ``cuda::annotated_ptr``). Persisting lines
have the set-aside to themselves: the flush's ordinary writes do not evict them,
so a candidate's data could stay in L2 from one timed call into the next, where
the eager baseline finds its own flushed. ``cuCtxResetPersistingL2Cache`` turns
every persisting line back into a normal one, which the flush then evicts.

The driver's entry points are looked up once, when the judge's modules are
imported into a worker, before any candidate code runs; on a machine without
the CUDA driver both are no-ops. What is established and what is not:
docs/timing.md ("What the flush does not clear"; docs/measurements/2026-12-01-l2-state.md).
"""

from __future__ import annotations

import ctypes
from typing import Callable

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06  # CUlimit, cuda.h


def _entry_points() -> tuple[Callable[[], int] | None, Callable[..., int] | None]:
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None, None
    reset_lines = driver.cuCtxResetPersistingL2Cache
    reset_lines.argtypes, reset_lines.restype = [], ctypes.c_int
    get_limit = driver.cuCtxGetLimit
    get_limit.argtypes, get_limit.restype = [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int], ctypes.c_int
    return reset_lines, get_limit


# Bound as default arguments: rebinding this module's names later changes nothing.
_RESET_LINES, _GET_LIMIT = _entry_points()


def reset_persisting_lines(_reset: Callable[[], int] | None = _RESET_LINES) -> int:
    """Turn every persisting L2 line back into a normal one, in the current context
    (the CUresult: nonzero where the GPU lacks the feature or no context is current)."""
    return int(_reset()) if _reset is not None else 0


def persisting_limit_bytes(_get: Callable[..., int] | None = _GET_LIMIT) -> int:
    """The current context's persisting-L2 set-aside in bytes (0 where none, or no CUDA)."""
    if _get is None:
        return 0
    value = ctypes.c_size_t(0)
    return int(value.value) if _get(ctypes.byref(value), CU_LIMIT_PERSISTING_L2_CACHE_SIZE) == 0 else 0
