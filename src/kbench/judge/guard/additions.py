"""Attributes a solution adds to a library module, as against ones it replaces.

Model answers fill in what their library version lacks: ``if not hasattr(tl, "gelu"):
tl.gelu = _gelu`` gives ``triton.language`` a helper it does not have, and replaces nothing
the judge or the reference calls. ``monkeypatch`` is about replacing (a function the
reference or the judge's clock calls, swapped for another), so an assignment is an addition,
and no finding, where there is evidence that the name was absent:

- the assignment runs only under ``if not hasattr(module, "name")`` for the same module and
  name (its body cannot run where the attribute exists); or
- the module is already imported in the judge's process and has no such attribute (what is
  absent there is absent from the module the worker imports: the same installed files).

A module the judge has not imported, and an unguarded assignment, stay findings: the reading
cannot tell an addition from a replacement there.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable

Dotted = Callable[[ast.AST], "str | None"]


def guarded_additions(tree: ast.AST, dotted: Dotted) -> set[int]:
    """ids of the assignments that run only where ``hasattr(module, name)`` is false, to that
    same ``module.name``."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        absent = _absent_attribute(node.test, dotted)
        if absent is None:
            continue
        for statement in node.body:
            for sub in ast.walk(statement):
                if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    if all(isinstance(t, ast.Attribute) and dotted(t) == absent for t in targets):
                        found.add(id(sub))
    return found


def _absent_attribute(test: ast.AST, dotted: Dotted) -> str | None:
    """``module.name`` where ``test`` is ``not hasattr(module, "name")``, else None."""
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
        return None
    call = test.operand
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "hasattr"
            and len(call.args) == 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)):
        return None
    module = dotted(call.args[0])
    return f"{module}.{call.args[1].value}" if module else None


def absent_from_loaded_module(name: str) -> bool:
    """``name`` (``package.module.attribute``) names an attribute that a module already
    imported here does not have: an assignment to it adds, it cannot replace."""
    module_name, _, attribute = name.rpartition(".")
    module = sys.modules.get(module_name)
    return module is not None and not hasattr(module, attribute)
