"""The package layout holds: no import cycle inside kbench, imports only downward, and inside the judge
only along its trust boundary (each judge subpackage's docstring says what it may import).

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


# Inside the judge: subpackages named after its trust boundary (src/kbench/judge/__init__.py, docs/architecture.md).
# Each may import the judge's modules that start with one of these prefixes (relative to kbench.judge), as each
# subpackage's docstring says; the orchestration at the top (TOP) may import any of them but the worker program.
JUDGE = "kbench.judge"
TOP = {"kbench.judge", "kbench.judge.evaluation", "kbench.judge.confirmation", "kbench.judge.executor",
       "kbench.judge.ray_executor"}
JUDGE_IMPORTS = {
    "protocol": ("protocol",),
    "exchange": ("exchange", "trusted.compare"),
    "processes": ("processes", "builds.cache"),
    "builds.cache": ("builds.cache", "processes.devices"),
    "builds": ("builds", "processes", "trusted.reference"),
    "trusted": ("trusted", "protocol", "exchange", "processes", "guard"),
    "worker": ("worker", "exchange", "protocol", "guard", "trusted.truth", "trusted.problem_checks",
               "trusted.pieces", "trusted.compare", "trusted.baselines"),
    "guard": ("guard", "protocol.state", "trusted.compare", "worker.self_test"),
}
# Code of the judge's own process: never imported, directly or not, by the program a candidate's process runs.
JUDGE_PROCESS_ONLY = ("trusted.calls", "trusted.answers", "trusted.reference", "trusted.tracebacks",
                      "processes.process", "processes.sandbox", "processes.spares", "processes.background",
                      "processes.sides", "builds", "guard.static", "guard.reported", "guard.ops")
WORKER_PROGRAM = "kbench.judge.worker.session"


def _under(name: str, prefix: str) -> bool:
    full = f"{JUDGE}.{prefix}"
    return name == full or name.startswith(full + ".")


def judge_room(name: str) -> str | None:
    """The key of ``JUDGE_IMPORTS`` a judge module belongs to (the longest that holds it), "top", or None."""
    if name in TOP:
        return "top"
    rooms = [room for room in JUDGE_IMPORTS if _under(name, room)]
    return max(rooms, key=len) if rooms else None


def judge_violations(edges: dict[str, set[str]]) -> list[str]:
    """Imports between the judge's modules that its layout does not allow."""
    found = []
    for name, targets in edges.items():
        if not name.startswith(JUDGE):
            continue
        room = judge_room(name)
        for target in sorted(t for t in targets if t.startswith(JUDGE + ".")):
            allowed = (not _under(target, "worker")) if room == "top" else (
                room is not None and any(_under(target, prefix) for prefix in JUDGE_IMPORTS[room]))
            if not allowed:
                found.append(f"{name} -> {target}")
    return found


def closure(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(edges.get(name, ()))
    return seen


def candidate_process_violations(edges: dict[str, set[str]]) -> list[str]:
    """The judge's own process's modules that the worker program imports, directly or not."""
    return sorted(m for m in closure(edges, WORKER_PROGRAM)
                  if m in TOP or any(_under(m, prefix) for prefix in JUDGE_PROCESS_ONLY))


def test_every_judge_module_lives_in_a_room_of_the_trust_boundary():
    homeless = [n for n in modules() if n.startswith(JUDGE) and judge_room(n) is None]
    assert homeless == []


def test_the_judge_imports_only_along_its_layout():
    assert judge_violations(graph()) == []


def test_the_worker_program_imports_nothing_of_the_judges_own_process():
    assert candidate_process_violations(graph()) == []


def test_the_worker_program_is_started_never_imported():
    importers = sorted(n for n, targets in graph().items() if WORKER_PROGRAM in targets)
    assert importers == []


def test_the_judge_layout_rules_find_what_breaks_them():
    edges = {
        WORKER_PROGRAM: {"kbench.judge.worker.loading", "kbench.judge.trusted.truth"},
        "kbench.judge.worker.loading": {"kbench.judge.trusted.answers"},  # the judge's process, one step away
        "kbench.judge.protocol.timing": {"kbench.judge.processes.process"},  # the protocol starts no process
        "kbench.judge.evaluation": {"kbench.judge.worker.session", "kbench.judge.trusted.calls"},
        "kbench.judge.builds.cache": {"kbench.judge.processes.devices"},
        "kbench.judge.builds.ahead": {"kbench.judge.trusted.calls"},
    }
    assert judge_violations(edges) == [
        "kbench.judge.worker.loading -> kbench.judge.trusted.answers",
        "kbench.judge.protocol.timing -> kbench.judge.processes.process",
        "kbench.judge.evaluation -> kbench.judge.worker.session",
        "kbench.judge.builds.ahead -> kbench.judge.trusted.calls",
    ]
    assert candidate_process_violations(edges) == ["kbench.judge.trusted.answers"]
    assert judge_room("kbench.judge.builds.cache") == "builds.cache" and judge_room("kbench.judge.x") is None
