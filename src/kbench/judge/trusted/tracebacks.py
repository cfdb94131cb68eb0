"""Tracebacks as the author of a solution needs them: their own file and line.

A candidate imports its solution from the evaluation's private copy
(``/dev/shm/kbench-.../solution.py``) and runs it under kbench's worker and
``torch.nn.Module``'s call machinery, so a raw traceback names a path the
author never saw and buries their one frame under a dozen of the harness's.
Here the copy's path becomes the solution's own, and frames outside the
solution are hidden: those before its first frame (the harness calling in)
and between its frames (``Module`` calls), with only the innermost one kept
after its last frame (where the error was raised, inside torch or Triton).
A traceback with no frame of the solution's (a constructor called with the
wrong arguments) keeps none: they are all the harness's. The exception line
stays whole. A problem whose own ``Model`` or file fails is shown the same
way (``reference.reference_failure``): the problem file's frames, not kbench's.
Judge-side text processing of what the candidate's process reported: it is
shown to people and to models, and decides nothing.
"""

from __future__ import annotations

import re
from pathlib import PurePath

FRAME = re.compile(r'  File "(?P<path>[^"]+)", line \d+')
HEADER = "Traceback (most recent call last):"


def for_author(text: str, copy_path: str, shown_path: str) -> str:
    """``text`` (a reason, a traceback, output) with the solution's copy named as
    ``shown_path``, and every traceback in it cut to the solution's frames."""
    if not copy_path:
        return text
    text = text.replace(copy_path, shown_path)
    # A SyntaxError's message names the file by its base name only.
    text = text.replace(f"({PurePath(copy_path).name}, line ", f"({PurePath(shown_path).name}, line ")
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index] == HEADER:
            frames, index = _frames(lines, index + 1)
            out.extend(_kept(frames, shown_path))
        else:
            out.append(lines[index])
            index += 1
    return "\n".join(out)


def _frames(lines: list[str], index: int) -> tuple[list[list[str]], int]:
    """The frames after a traceback's header (each its ``File`` line and the
    indented source lines under it), and where they end."""
    frames: list[list[str]] = []
    while index < len(lines) and FRAME.match(lines[index]):
        frame = [lines[index]]
        index += 1
        while index < len(lines) and lines[index].startswith("    "):
            frame.append(lines[index])
            index += 1
        frames.append(frame)
    return frames, index


def _kept(frames: list[list[str]], shown_path: str) -> list[str]:
    """The header and the frames worth showing, saying how many were hidden."""
    own = [i for i, frame in enumerate(frames) if FRAME.match(frame[0]).group("path") == shown_path]
    kept = own + ([len(frames) - 1] if own and own[-1] != len(frames) - 1 else [])
    hidden = len(frames) - len(kept)
    header = HEADER if not hidden else f"Traceback (most recent call last; {hidden} frame(s) of kbench, torch or " \
                                       f"other libraries hidden):"
    return [header, *(line for i in kept for line in frames[i])]
