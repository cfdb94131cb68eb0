"""Names in a solution's syntax tree, resolved as Python would resolve them.

Through the file's imports (``import torch.nn.functional as F`` makes ``F.relu`` read as
``torch.nn.functional.relu``) and through the routes around plain attribute access that
spell a name out in a constant string (``getattr(torch, "compile")``,
``vars(torch)["compile"]``, ``importlib.import_module("gc")``...), so that aliases do
not hide a call from the static rules (``static.py``) or from the reading of what a
solution computes with (``reference_op.py``). Once ``read_scopes`` has read the whole file,
a name is what its bindings hold, scope by scope (``scopes.py``): a variable of the file's
own named like a module (a tensor ``signal``, a loop variable ``gc``) names nothing, an
alias made by assignment (``exit_now = sys.exit``) names what it was given, and a name
bound both ways names the module *undecided* (``Dotted.undecided`` says why).
"""

from __future__ import annotations

import ast

from kbench.judge.guard.scopes import Binding, Scopes


def matches(name: str, prefixes: tuple[str, ...]) -> bool:
    """``name`` is one of ``prefixes`` or inside one (``torch.jit`` holds ``torch.jit.script``;
    a prefix ending in a dot holds whatever starts with it)."""
    return any(name == p or (p.endswith(".") and name.startswith(p)) or name.startswith(p + ".") for p in prefixes)


SETTERS = ("setattr", "delattr", "type.__setattr__", "object.__setattr__", "type.__delattr__", "object.__delattr__")
GETTERS = ("getattr", "object.__getattribute__", "type.__getattribute__", "inspect.getattr_static")


class Dotted(str):
    """A dotted name; ``undecided`` says why the file binds its head to it and to something
    else too (empty: decided), ``others`` the same name read through the other bindings."""

    undecided: str = ""
    others: tuple[str, ...] = ()

    def every(self) -> tuple[str, ...]:
        return (self, *self.others)


def _joined(head: str, *parts: str) -> Dotted:
    name = Dotted(".".join([head, *parts]))
    name.undecided = getattr(head, "undecided", "")
    name.others = tuple(".".join([other, *parts]) for other in getattr(head, "others", ()))
    return name


def every(name: str) -> tuple[str, ...]:
    """``name`` and the names its head's other bindings give it (a loop over ``(sys, math)``)."""
    return name.every() if isinstance(name, Dotted) else (name,)


OWN_NAMES = ("self", "cls")  # read literally: the rules about a model's own attributes need them


class NameReader(ast.NodeVisitor):
    """A visitor that knows the file's imports: ``dotted`` names an expression, and each
    import and call is handed to ``imported`` and ``used`` (nothing here: the readers
    built on this say what they mean)."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.scopes: Scopes | None = None
        self._resolving: set[int] = set()

    def read_scopes(self, tree: ast.AST) -> None:
        """Read what every name of ``tree`` is bound to (before reading any part of it)."""
        self.scopes = Scopes(tree)

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
            head = self._head(node)
        else:
            head = None
        return _joined(head, *reversed(parts)) if head else None

    def _head(self, node: ast.Name) -> str | None:
        """What a name read holds: the module path (or member) its bindings name, None for a
        value of the file's own, the name itself where the file binds it nowhere (a builtin)."""
        scope = self.scopes.scope_of(node) if self.scopes else None
        if scope is None:  # no scopes read, or a node made by the reader: the imports alone
            return self.aliases.get(node.id, node.id)
        bindings = scope.lookup(node.id)
        if not bindings:
            return node.id
        if id(node) in self._resolving:  # a = b; b = a
            return None
        self._resolving.add(id(node))
        try:
            meanings = [meaning for binding in bindings for meaning in self._meanings(binding)]
        finally:
            self._resolving.discard(id(node))
        named = [m for m in meanings if m is not None]
        own = len(named) < len(meanings)
        if not named:
            return node.id if node.id in OWN_NAMES else None
        distinct = sorted(set(named))
        inner = next((m.undecided for m in named if getattr(m, "undecided", "")), "")
        head = Dotted(distinct[0])
        head.others = tuple(distinct[1:])
        if len(distinct) > 1 or own or inner:
            head.undecided = inner or (f"`{node.id}` is bound to {' and to '.join(distinct)}"
                                       + (" and to a value of the file's own" if own else ""))
        return head

    def _meanings(self, binding: Binding) -> list[str | None]:
        if binding.path is not None:
            return [binding.path]
        if binding.value is not None:
            return [self.dotted(binding.value)]
        if binding.elements:
            return [self.dotted(element) for element in binding.elements]
        return [None]

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
            return _joined(name, attribute) if attribute and name else None

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
                name = _joined(base, method.value)
        return name

    def visit_Call(self, node: ast.Call) -> None:
        if name := self.called(node):
            self.used(name, node)
        self.generic_visit(node)
