"""The package layout holds: no import cycle inside kbench, and imports only downward.

Reads every module's imports from its source (function-level imports
included), so it needs nothing installed and runs in well under a second.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "kbench"
# Bottom to top: a package may import its own modules and those of packages below it.
LAYERS = ("core", "suite", "judge", "audit", "repo", "runs", "rewards", "agents", "serve", "adapters", "cli")
MAX_MODULE_LINES = 500


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of kbench's code (the bundled problem files are data, not code)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        if name.startswith("kbench.suite.level") or name.startswith("kbench.suite.examples"):
            continue
        found[name] = path
    return found


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The kbench modules ``name`` imports (``from p import m`` counts as ``p.m`` when that is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in known else target)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules around it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def layer(name: str) -> int | None:
    """The layer of a module; None for kbench's top-level modules (the public API may import anything)."""
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_no_import_cycle_inside_kbench():
    assert find_cycle(graph()) is None


def test_a_cycle_is_found_where_there_is_one():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_package_imports_only_downward():
    upward = [
        f"{name} -> {target}"
        for name, targets in graph().items()
        for target in targets
        if layer(name) is not None and layer(target) is not None and layer(target) > layer(name)
    ]
    assert upward == []


def test_every_module_lives_in_a_layer_and_stays_small():
    found = modules()
    outside = [n for n in found if layer(n) is None and n not in ("kbench", "kbench.__main__")]
    assert outside == []
    too_long = {n: len(p.read_text().splitlines()) for n, p in found.items()}
    assert {n: lines for n, lines in too_long.items() if lines > MAX_MODULE_LINES} == {}
