"""The bundled problem suite: problem files under ``kbench/suite/level<N>/``.

A suite problem's id is its path below that folder without ``.py``
(``level1/relu``); every command that takes a problem accepts an id or a path.
``problem`` holds the problem file format; ``kernelbench`` KernelBench's numbering
and precisions; ``examples/`` the bundled example solutions (``kbench demo``).

May import: ``kbench.core``. The audit, which checks problems with the judge's
workers, sits above the judge in ``kbench.audit``.
"""

from __future__ import annotations

from pathlib import Path

from kbench.suite import kernelbench
from kbench.suite.problem import Problem, ProblemError, load_problem

SUITE_DIR = Path(__file__).parent


def find_problem(id_or_path: str | Path) -> Problem:
    """A problem by suite id, by file path, or by KernelBench's numbers in a folder of its
    files (``DIR/level1/19``, ``DIR/level_1_problem_19``: kbench.suite.kernelbench);
    ProblemError if it is none of them (or is a problem's source text given where its
    path was expected)."""
    if isinstance(id_or_path, str) and ("\n" in id_or_path or "class Model" in id_or_path):
        raise ProblemError(f"problem {id_or_path.strip()[:60]!r}...: this is source code, not a suite id or a path; "
                           "write it to a file and pass the file's path")
    path = Path(id_or_path)
    if _is_file(path):
        return load_problem(path)
    suite_path = SUITE_DIR / f"{id_or_path}.py"
    if str(id_or_path).strip() and _is_file(suite_path):
        return load_problem(suite_path, problem_id=str(id_or_path))
    if numbered := kernelbench.find_file(str(id_or_path)):  # KernelBench's numbers: DIR/level1/19
        return load_problem(numbered, problem_id=kernelbench.problem_id(numbered))
    raise ProblemError(f"no problem file or suite id {str(id_or_path)!r}")


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long to be a path
        return False


def suite_problems(level: int | None = None) -> list[Problem]:
    """Every bundled problem, optionally of one level, in id order."""
    problems = []
    for path in sorted(SUITE_DIR.glob("level*/*.py")):
        problem_id = path.relative_to(SUITE_DIR).with_suffix("").as_posix()
        problem = load_problem(path, problem_id=problem_id)
        if level is None or problem.level == level:
            problems.append(problem)
    return problems
