"""A problem: one Python file in the KernelBench format.

The file defines ``class Model(torch.nn.Module)``, ``get_inputs()`` (forward
inputs, created on the CPU), ``get_init_inputs()`` (constructor arguments) and
size constants at module level. kbench reads a few optional extras, all
ignored by other tools, so the file stays a plain KernelBench problem:

- ``KBENCH_LEVEL = 1`` and ``KBENCH_NAME = "..."`` (else taken from the path);
- ``KBENCH_SMALL = {"batch_size": 16, ...}``: values that replace the top-level
  size constants of the same names for the ``small`` size (CPU checks, CI);
- ``KBENCH_DTYPE_SIZES = {"bfloat16": {"batch_size": 64, ...}}``: values that
  replace size constants at the default size when the problem is judged in
  that dtype (a bf16 variant several times faster than the fp32 file would
  otherwise fall under the audit's 1 ms floor);
- ``KBENCH_TOLERANCE = {"float32": {"atol": ..., "rtol": ...}}``: a problem's
  own tolerance where the default for its dtype is wrong for it, and optionally
  ``"multiple"``: how many times the reference's own error against the float64
  truth a candidate may add (kbench.judge.trusted.compare, at least 2; default 32 for
  float32, 2 for 16-bit types);
- ``def kbench_flops()`` and ``def kbench_bytes()``: the operation count and the
  fewest bytes a kernel must move, for a speed-of-light time;
- ``KBENCH_DTYPES = ("float32", "bfloat16")``: the dtypes the problem may be
  judged in (``--dtype``). The file is written in float32; another dtype casts
  the floating-point inputs and the model's floating-point parameters and
  buffers to it, for the reference and the solution alike. Without it, only
  the file's own dtype (``float32``);
- ``KBENCH_REQUIRES = ("transformers",)``: modules the problem imports beyond
  torch; where one is missing the problem is skipped with that reason.

Everything here reads the file's syntax tree; nothing in the file runs in the
process that calls these functions. Problem code only ever runs inside a worker
process (see ``worker.py``), so a broken or hostile problem file cannot take
down the judge.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIZES = ("default", "small")
DTYPES = ("float32", "bfloat16", "float16")  # float32: the file as written


class ProblemError(Exception):
    """A problem file that cannot be used, with the file and the defect named."""


class ProblemSkipped(ProblemError):
    """A sound problem this machine cannot run (a module it needs is not installed)."""


@dataclass(frozen=True)
class Problem:
    """What the judge knows about a problem before running any of it."""

    path: Path
    id: str
    name: str
    level: int | None
    sha256: str
    small: dict[str, Any] = field(default_factory=dict)
    tolerance: dict[str, dict[str, float]] = field(default_factory=dict)
    dtypes: tuple[str, ...] = ("float32",)
    requires: tuple[str, ...] = ()
    dtype_sizes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Read once, with the hash: what runs is what was hashed, whatever happens to the file later.
    source: str = field(default="", repr=False)

    def size_constants(self, size: str, dtype: str = "float32") -> dict[str, Any]:
        """The size constants replaced when the file runs at ``size`` in ``dtype``."""
        return self.small if size == "small" else self.dtype_sizes.get(dtype, {})

    def written_sizes(self) -> dict[str, Any]:
        """The size constants as the file assigns them (the default size in float32):
        those that KBENCH_SMALL or KBENCH_DTYPE_SIZES replace; a value that is not a
        literal is given as its source text."""
        names = set(self.small).union(*(set(values) for values in self.dtype_sizes.values()))
        written: dict[str, Any] = {}
        for node in ast.parse(self.source).body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id in names:
                        try:
                            written[target.id] = ast.literal_eval(node.value)
                        except ValueError:
                            written[target.id] = ast.unparse(node.value)
        return written


def load_problem(path: str | Path, problem_id: str | None = None) -> Problem:
    """Read and validate a problem file; raise ProblemError naming what is wrong."""
    path = Path(path)
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemError(f"problem file {path}: cannot be read ({exc})") from exc
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise ProblemError(
            f"problem file {path}: not valid Python (line {exc.lineno}: {exc.msg})"
        ) from exc

    defined = {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }
    if not isinstance(defined.get("Model"), ast.ClassDef):
        raise ProblemError(f"problem file {path}: defines no class Model")
    if not isinstance(defined.get("get_inputs"), ast.FunctionDef):
        raise ProblemError(f"problem file {path}: defines no function get_inputs()")

    constants = _literal_constants(tree, path)
    small = constants.get("KBENCH_SMALL", {})
    if not isinstance(small, dict):
        raise ProblemError(f"problem file {path}: KBENCH_SMALL must be a dict")
    assigned = _top_level_names(tree)
    _check_size_names(small, "KBENCH_SMALL", assigned, path)
    dtype_sizes = constants.get("KBENCH_DTYPE_SIZES", {})
    if not isinstance(dtype_sizes, dict) or not all(isinstance(v, dict) for v in dtype_sizes.values()):
        raise ProblemError(f"problem file {path}: KBENCH_DTYPE_SIZES must map dtype names to dicts")
    for dtype, values in dtype_sizes.items():
        _check_size_names(values, f"KBENCH_DTYPE_SIZES[{dtype!r}]", assigned, path)
    tolerance = constants.get("KBENCH_TOLERANCE", {})
    _check_tolerance(tolerance, path)

    dtypes = _names(constants, "KBENCH_DTYPES", path, ("float32",))
    unknown_dtypes = sorted(set(dtypes) - set(DTYPES))
    if unknown_dtypes:
        raise ProblemError(f"problem file {path}: KBENCH_DTYPES names {unknown_dtypes}; known: {', '.join(DTYPES)}")
    requires = _names(constants, "KBENCH_REQUIRES", path, ())
    unsized = sorted(set(dtype_sizes) - set(dtypes))
    if unsized:
        raise ProblemError(f"problem file {path}: KBENCH_DTYPE_SIZES names {unsized}, not in its KBENCH_DTYPES")

    level = constants.get("KBENCH_LEVEL")
    if level is None:
        match = re.fullmatch(r"level_?(\d+)", path.parent.name, flags=re.IGNORECASE)
        level = int(match.group(1)) if match else None
    return Problem(
        path=path.resolve(),
        id=problem_id or path.stem,
        name=str(constants.get("KBENCH_NAME", path.stem)),
        level=level,
        sha256=hashlib.sha256(source.encode()).hexdigest(),
        source=source,
        small=small,
        tolerance=tolerance,
        dtypes=dtypes,
        requires=requires,
        dtype_sizes=dtype_sizes,
    )


TOLERANCE_KEYS = ("atol", "rtol", "multiple")


def _check_tolerance(tolerance: Any, path: Path) -> None:
    """KBENCH_TOLERANCE: dtype names to {atol, rtol, multiple}, each a number at least 0 (a multiple at least 2)."""
    if not isinstance(tolerance, dict) or not all(isinstance(v, dict) for v in tolerance.values()):
        raise ProblemError(f"problem file {path}: KBENCH_TOLERANCE must map dtype names to dicts")
    for dtype, values in tolerance.items():
        for key, value in values.items():
            lowest = 2 if key == "multiple" else 0
            if key not in TOLERANCE_KEYS or isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not value >= lowest:
                raise ProblemError(f"problem file {path}: KBENCH_TOLERANCE[{dtype!r}][{key!r}] = {value!r}: "
                                   f"keys are {', '.join(TOLERANCE_KEYS)}, numbers of at least 0 (multiple: 2)")


def _check_size_names(values: dict[str, Any], where: str, assigned: set[str], path: Path) -> None:
    """Sizes may only replace the file's own top-level constants."""
    unknown = sorted(set(values) - assigned)
    if unknown:
        raise ProblemError(f"problem file {path}: {where} names {unknown}, which are not top-level constants of the file")


def _names(constants: dict[str, Any], key: str, path: Path, default: tuple[str, ...]) -> tuple[str, ...]:
    value = constants.get(key, default)
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
        raise ProblemError(f"problem file {path}: {key} must be a tuple of strings")
    return tuple(value)


def missing_requirements(problem: Problem) -> list[str]:
    """The modules the problem needs that this Python cannot import (workers run the same Python)."""
    return [name for name in problem.requires if importlib.util.find_spec(name) is None]


def check_runnable(problem: Problem, dtype: str = "float32") -> None:
    """ProblemSkipped when a module the problem needs is missing here; ProblemError
    when the problem has no variant in ``dtype``."""
    missing = missing_requirements(problem)
    if missing:
        raise ProblemSkipped(f"problem {problem.id}: skipped: needs {', '.join(missing)}, which this Python cannot import")
    if dtype not in problem.dtypes:
        raise ProblemError(
            f"problem {problem.id}: no {dtype} variant (KBENCH_DTYPES allows {', '.join(problem.dtypes)})"
        )


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _literal_constants(tree: ast.Module, path: Path) -> dict[str, Any]:
    """The KBENCH_* constants, which must be literals so they can be read unexecuted."""
    found: dict[str, Any] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id.startswith("KBENCH_"):
                try:
                    found[target.id] = ast.literal_eval(node.value)
                except ValueError as exc:
                    raise ProblemError(
                        f"problem file {path}: {target.id} must be a literal "
                        f"(line {node.lineno})"
                    ) from exc
    return found


def resolve_size(size: str, device: str) -> str:
    """``auto`` means the small size on a CPU and the default size on a GPU."""
    if size == "auto":
        return "small" if device == "cpu" else "default"
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose from auto, {', '.join(SIZES)}")
    return size


def sized_tree(problem: Problem, size: str, dtype: str = "float32") -> ast.Module:
    """The problem's syntax tree with its size constants set for ``size`` and ``dtype``.

    Rewriting the assignments (rather than patching module attributes after
    import) keeps constants derived from them consistent.
    """
    tree = ast.parse(problem.source, filename=str(problem.path))
    values = problem.size_constants(size, dtype)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in values:
                    node.value = ast.copy_location(ast.parse(repr(values[target.id]), mode="eval").body, node.value)
    ast.fix_missing_locations(tree)
    return tree


def import_problem(problem: Problem, size: str, dtype: str = "float32") -> types.ModuleType:
    """Execute the problem file at ``size`` in ``dtype``'s sizes. Only for worker processes."""
    module = types.ModuleType(f"kbench_problem_{problem.sha256[:12]}")
    module.__file__ = str(problem.path)
    sys.modules[module.__name__] = module
    code = compile(sized_tree(problem, size, dtype), str(problem.path), "exec")
    exec(code, module.__dict__)
    if not hasattr(module, "get_init_inputs"):
        module.get_init_inputs = lambda: []
    return module
