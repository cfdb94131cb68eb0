"""The ``if __name__ == "__main__":`` block a model appends to its answer to try it.

Python never runs that block when a file is imported, and the judge imports a
solution; but a block that seeds the RNG, times with ``time``, compares with the
reference's own operation or ends in ``sys.exit`` reads, to the static rules, as
a cheat. So the judge removes the block from the solution's syntax tree before
both reading and running it: what the rules read is exactly what runs, and a
solution that rebinds ``__name__`` to reach its block runs nothing of it. An
``else:`` beside the block is what runs on import, and stays.
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
    ``else:`` statements (none, usually)."""
    body: list[ast.stmt] = []
    for node in tree.body:
        body.extend(node.orelse if is_self_test(node) else [node])
    return ast.Module(body=body, type_ignores=tree.type_ignores)
