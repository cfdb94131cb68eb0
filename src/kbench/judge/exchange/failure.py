"""Failures inside a worker, each attributed to the phase of the work it happened in.

The phase decides the verdict (a failure while building is a
``compile_error``, in ``forward`` a ``runtime_error``...): the judge maps it.
"""

from __future__ import annotations

import traceback
from contextlib import contextmanager


class Failure(Exception):
    """An error attributed to one phase of the work (``import``, ``init``, ``forward``...)."""

    def __init__(self, phase: str, error: BaseException | str):
        self.phase = phase
        if isinstance(error, BaseException):
            self.message = f"{type(error).__name__}: {error}"
            self.trace = "".join(traceback.format_exception(error))
        else:
            self.message, self.trace = error, ""
        super().__init__(self.message)


@contextmanager
def phase(name: str):
    """Attribute any exception inside to phase ``name``.

    ``SystemExit`` and ``KeyboardInterrupt`` pass through on purpose: a
    candidate that exits ends its worker, and the judge classifies that as a
    crash rather than trusting anything the process said.
    """
    try:
        yield
    except Failure:
        raise
    except Exception as exc:
        raise Failure(name, exc) from exc
