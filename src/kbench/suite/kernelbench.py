"""KernelBench's numbering and precisions, for problems that are KernelBench's own files.

KernelBench keeps its problems in ``level<L>/<P>_<Name>.py`` (``level1/19_ReLU.py``
is problem 19 of level 1) and names a run's files ``level_<L>_problem_<P>_...``.
People come with those numbers: ``DIR/level1/19``, ``DIR/level_1_problem_19`` and
``DIR/19`` (DIR a level folder) name the file ``<P>_*.py`` here, and a problem of
such a file is known by ``level1/19`` wherever a run's problem is asked for.

KernelBench judges any problem in fp16 or bf16 by casting it (its eval's
``precision``): the floating-point inputs and the model's floating-point weights
and buffers in that dtype, compared at an absolute and relative tolerance of 1e-2,
at the sizes the file is written with. ``at_precision`` gives a problem that
setting. It is not a problem's own dtype variant (``KBENCH_DTYPES``, with its own
sizes and calibrated tolerances): a run records which one it judged, and runs of
the two are not compared. One difference is kept on purpose: KernelBench casts
integer inputs too (indices, class targets), which breaks the problems that take
them; here integers stay integers, as for every kbench dtype.

A KernelBench file carries no tolerance of its own: KernelBench's constant
(1e-4 for float32, 1e-2 for fp16 and bf16) is its tolerance. kbench's default
correctness criterion applies it against the float64 truth plus a multiple of
the reference's own error (docs/correctness.md), so that an honest summation order
is not rejected; ``--correctness kernelbench`` applies it against the
reference's output as KernelBench does, and every verdict records whether that
criterion accepts it (the KernelBench-compatible column of scores and exports).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from kbench.suite.problem import Problem

PRECISIONS = {"fp16": "float16", "bf16": "bfloat16"}  # KernelBench's names, the dtype judged
TOLERANCE = {"atol": 1e-2, "rtol": 1e-2}  # KernelBench's for fp16 and bf16 (torch.allclose's atol and rtol)
NUMBERED = re.compile(r"(\d+)_")  # a KernelBench problem file: <P>_<Name>.py
LEVEL_FOLDER = re.compile(r"level_?(\d+)", re.IGNORECASE)
LEVEL_PROBLEM = re.compile(r"level_(\d+)_problem_(\d+)")
SHORT_ID = re.compile(r"level(\d+)/(\d+)")


def number_of(path: str | Path) -> int | None:
    """The KernelBench problem number of a file named ``<P>_<Name>.py``, else None."""
    match = NUMBERED.match(Path(path).name)
    return int(match.group(1)) if match else None


def short_id(problem_id: str) -> str | None:
    """``level1/19`` for the problem id ``level1/19_ReLU`` (a KernelBench file in a level folder), else None."""
    folder, _, stem = problem_id.rpartition("/")
    level, number = LEVEL_FOLDER.fullmatch(folder.rpartition("/")[2]), NUMBERED.match(stem)
    return f"level{int(level.group(1))}/{int(number.group(1))}" if level and number else None


def canonical(query: str) -> str | None:
    """A KernelBench-style reference to a problem as ``level<L>/<P>``: ``level1/19`` or
    ``level_1_problem_19`` (leading zeros and a ``_sample_...`` tail ignored); else None."""
    if match := LEVEL_PROBLEM.match(query):
        return f"level{int(match.group(1))}/{int(match.group(2))}"
    if match := SHORT_ID.fullmatch(query):
        return f"level{int(match.group(1))}/{int(match.group(2))}"
    return None


def level_folders(directory: Path) -> list[Path]:
    """The ``level<N>`` folders of a KernelBench problems folder, in level order."""
    found = [p for p in directory.iterdir() if p.is_dir() and LEVEL_FOLDER.fullmatch(p.name)]
    return sorted(found, key=lambda p: int(LEVEL_FOLDER.fullmatch(p.name).group(1)))


def find_file(reference: str) -> Path | None:
    """The problem file a KernelBench-style path names, or None when it names none:
    ``DIR/<P>`` (DIR a level folder), ``DIR/level<L>/<P>`` and ``DIR/level_<L>_problem_<P>``
    (DIR holding level folders) name ``<P>_*.py`` there. ProblemError-free: the
    caller says what is wrong with a reference that names nothing."""
    path = Path(reference)
    if path.exists() or not path.parent.is_dir():
        return None
    folder, number = path.parent, None
    if match := LEVEL_PROBLEM.fullmatch(path.name):
        folder = next((f for f in level_folders(path.parent)
                       if int(LEVEL_FOLDER.fullmatch(f.name).group(1)) == int(match.group(1))), None)
        number = int(match.group(2))
    elif path.name.isdigit():
        number = int(path.name)
    if folder is None or number is None:
        return None
    files = [f for f in folder.glob("*.py") if number_of(f) == number]
    return files[0] if len(files) == 1 else None


def problem_id(path: Path) -> str:
    """A KernelBench file's id, as a directory of problems gives it: ``level1/19_ReLU``."""
    return f"{path.resolve().parent.name}/{path.stem}"


def at_precision(problem: Problem, precision: str) -> Problem:
    """The problem as KernelBench judges it at ``precision`` (fp16, bf16): every floating-point
    input and weight cast to the dtype, at the file's own sizes, within 1e-2; ValueError for
    another precision."""
    if precision not in PRECISIONS:
        raise ValueError(f"--precision {precision!r}: choose from {', '.join(PRECISIONS)}")
    dtype = PRECISIONS[precision]
    return replace(problem, dtypes=(dtype,), dtype_sizes={}, tolerance={dtype: dict(TOLERANCE)})
