"""The ``if __name__ == "__main__":`` block a model appends to its answer to try it.

Python never runs that block when a file is imported, and the judge imports a
solution; but a block that seeds the RNG, times with ``time``, compares with the
reference's own operation or ends in ``sys.exit`` reads, to the static rules, as
a cheat. So the judge removes the block from the solution's syntax tree before
both reading and running it: what the rules read is exactly what runs, and a
solution that rebinds ``__name__`` to reach its block runs nothing of it. An
``else:`` beside the block is what runs on import, and stays.

The same holds for a self-test written as a top-level function that only the block calls
(``def _self_test(): ... sys.exit(1)``, then ``if __name__ == "__main__": _self_test()``):
a function, not decorated (a decorator runs on import and may register it), bound once,
that the block names and nothing else of the module reaches (directly or through other
such functions) is removed with the block. Reached any other way (its name in a string,
``globals()[name]``), it is then gone, and the solution fails on its own.
"""

from __future__ import annotations

import ast


def is_self_test(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` (either way round), at the top of a module."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = {_spelled(test.left), _spelled(test.comparators[0])}
    return sides == {"name", "main"}


def _spelled(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name) and node.id == "__name__":
        return "name"
    if isinstance(node, ast.Constant) and node.value == "__main__":
        return "main"
    return None


def without_self_tests(tree: ast.Module) -> ast.Module:
    """The module as an import runs it: each top-level self-test block replaced by its
    ``else:`` statements (none, usually), and the functions only the blocks reach removed."""
    body: list[ast.stmt] = []
    blocks: list[ast.stmt] = []
    for node in tree.body:
        if is_self_test(node):
            body.extend(node.orelse)
            blocks.append(node)
        else:
            body.append(node)
    tested = _only_tested(body, blocks)
    return ast.Module(body=[node for node in body if node not in tested], type_ignores=tree.type_ignores)


def _only_tested(body: list[ast.stmt], blocks: list[ast.stmt]) -> list[ast.stmt]:
    """The top-level functions of ``body`` that the self-test ``blocks`` reach and nothing
    else of the module does."""
    bound: dict[str, int] = {}
    for node in body:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
                bound[sub.id] = bound.get(sub.id, 0) + 1
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[sub.name] = bound.get(sub.name, 0) + 1
            elif isinstance(sub, ast.alias):
                name = sub.asname or sub.name.split(".")[0]
                bound[name] = bound.get(name, 0) + 1
    candidates = {node.name: node for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and not node.decorator_list and bound.get(node.name) == 1}
    if not blocks or not candidates:
        return []
    reached: set[str] = set()
    pending = [node for node in body if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                                             and node.name in candidates)]
    while pending:
        for name in _names_read(pending.pop()):
            if name in candidates and name not in reached:
                reached.add(name)
                pending.append(candidates[name])
    tested: set[str] = set()
    pending = list(blocks)
    while pending:
        for name in _names_read(pending.pop()):
            if name in candidates and name not in reached and name not in tested:
                tested.add(name)
                pending.append(candidates[name])
    return [candidates[name] for name in tested]


def _names_read(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}
