"""Names in a solution's syntax tree, resolved as Python would resolve them.

Through the file's imports (``import torch.nn.functional as F`` makes ``F.relu`` read as
``torch.nn.functional.relu``) and through the routes around plain attribute access that
spell a name out in a constant string (``getattr(torch, "compile")``,
``vars(torch)["compile"]``, ``importlib.import_module("gc")``...), so that aliases do
not hide a call from the static rules (``static.py``) or from the reading of what a
solution computes with (``reference_op.py``).
"""

from __future__ import annotations

import ast


def matches(name: str, prefixes: tuple[str, ...]) -> bool:
    """``name`` is one of ``prefixes`` or inside one (``torch.jit`` holds ``torch.jit.script``;
    a prefix ending in a dot holds whatever starts with it)."""
    return any(name == p or (p.endswith(".") and name.startswith(p)) or name.startswith(p + ".") for p in prefixes)


SETTERS = ("setattr", "delattr", "type.__setattr__", "object.__setattr__", "type.__delattr__", "object.__delattr__")
GETTERS = ("getattr", "object.__getattribute__", "type.__getattribute__", "inspect.getattr_static")


class NameReader(ast.NodeVisitor):
    """A visitor that knows the file's imports: ``dotted`` names an expression, and each
    import and call is handed to ``imported`` and ``used`` (nothing here: the readers
    built on this say what they mean)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    def imported(self, name: str, node: ast.AST) -> None:
        """A module or a name of one imported."""

    def used(self, name: str, node: ast.AST) -> None:
        """A call of ``name``."""

    def dotted(self, node: ast.AST) -> str | None:
        """The dotted name an expression reaches, through the imports and the
        routes around plain attribute access that spell a name out in a
        constant string: ``X.__dict__["a"]``, ``vars(X)["a"]``,
        ``X.__dict__.get("a")``, ``getattr(X, "a")``, ``X.__getattribute__("a")``,
        ``object.__getattribute__(X, "a")``, ``inspect.getattr_static(X, "a")``,
        ``operator.attrgetter("a.b")(X)``, ``importlib.import_module("m")``,
        ``__import__("m")``."""
        parts: list[str] = []
        while True:
            if isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            elif (keyed := self._keyed(node)) is not None:
                node, key = keyed
                parts.append(key)
            else:
                break
        if isinstance(node, ast.Call):
            head = self._route(node)
        elif isinstance(node, ast.Name):
            head = self.aliases.get(node.id, node.id)
        else:
            head = None
        return ".".join([head, *reversed(parts)]) if head else None

    def _keyed(self, node: ast.AST) -> tuple[ast.AST, str] | None:
        """``X.__dict__["a"]`` or ``vars(X)["a"]``: (X, "a")."""
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)):
            return None
        holder = node.value
        if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
            return holder.value, node.slice.value
        if isinstance(holder, ast.Call) and self.dotted(holder.func) == "vars" and len(holder.args) == 1:
            return holder.args[0], node.slice.value
        return None

    def _route(self, call: ast.Call) -> str | None:
        """The name a call that looks a name up by a constant string returns."""
        def constant(index: int, args: list[ast.expr]) -> str | None:
            value = args[index] if len(args) > index else None
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None

        def joined(base: ast.AST | None, attribute: str | None) -> str | None:
            name = self.dotted(base) if base is not None else None
            return f"{name}.{attribute}" if attribute and name else None

        first = call.args[0] if call.args else None
        if isinstance(call.func, ast.Call) and self.dotted(call.func.func) == "operator.attrgetter":
            return joined(first, constant(0, call.func.args))
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("get", "__getitem__"):
            keyed = self._keyed(ast.Subscript(value=call.func.value, slice=first or ast.Constant(None)))
            return joined(keyed[0], keyed[1]) if keyed else None  # X.__dict__.get("a"), vars(X).get("a")
        function = self.dotted(call.func)
        if function in GETTERS:
            return joined(first, constant(1, call.args))
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("__getattribute__", "__getattr__"):
            return joined(call.func.value, constant(0, call.args))
        if function in ("importlib.import_module", "__import__"):
            return constant(0, call.args)
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
            self.imported(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            full = f"{module}.{alias.name}" if module else alias.name
            self.aliases[alias.asname or alias.name] = full
            self.imported(full, node)
            self.imported(module, node)

    def called(self, node: ast.Call) -> str:
        """The name a call calls ("" where none can be read)."""
        name = self.dotted(node.func) or ""
        if isinstance(node.func, ast.Call) and self.dotted(node.func.func) == "operator.methodcaller" and node.args:
            method = node.func.args[0] if node.func.args else None  # methodcaller("a")(X) calls X.a
            if isinstance(method, ast.Constant) and isinstance(method.value, str) and (base := self.dotted(node.args[0])):
                name = f"{base}.{method.value}"
        return name

    def visit_Call(self, node: ast.Call) -> None:
        if name := self.called(node):
            self.used(name, node)
        self.generic_visit(node)
