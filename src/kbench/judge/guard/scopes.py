"""What each name of a solution is bound to, scope by scope, as Python binds it.

A static rule about a module (``signal``, ``gc``, ``sys``, ``os``, ``threading``, ...)
is about that module, not about a word: a tensor named ``signal`` (``signal.contiguous()``)
or a loop variable named ``gc`` (``for gc in self.gcs: gc.linear.weight``) is a value of
the solution's own. So every name read is looked up the way Python looks it up (the
function's own bindings, then the enclosing functions', then the module's, skipping class
bodies; ``global`` and ``nonlocal`` followed), and each of its bindings says what it holds:

- an import: the module, or the module's member, it names;
- ``name = <expression>`` (also a pair of a tuple assigned to a tuple, ``:=``, an argument's
  default, a loop over a literal tuple or list): what the expression names, read the same
  way (``exit_now = sys.exit`` names ``sys.exit``; ``x = torch.randn(4)`` names nothing);
- anything else (an argument, a loop or ``with`` variable, a ``def``, a class, an unpacking
  of a call): a value of the solution's own.

``NameReader.dotted`` (names.py) joins these: a name all of whose bindings name the same
thing reads as that thing, decided; one whose bindings are all values of the file's own
names nothing; one bound both ways (``import signal`` and ``signal = x``) reads as the
module, undecided, which the static rules report as a flag (``undecided``), not a
rejection. A name bound nowhere in the file (a builtin) reads as itself.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Binding:
    """One way a name is bound: ``path`` for an import, ``value`` for an expression whose
    name it holds, ``elements`` for a loop over a literal tuple or list; none of them for a
    value of the file's own."""

    path: str | None = None
    value: ast.expr | None = None
    elements: tuple[ast.expr, ...] = ()


OWN = Binding()


@dataclass
class Scope:
    kind: str  # "module", "function", "class" or "comprehension"
    parent: "Scope | None"
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)

    def bind(self, name: str, binding: Binding) -> None:
        self.target(name).bindings.setdefault(name, []).append(binding)

    def target(self, name: str) -> "Scope":
        """The scope an assignment to ``name`` here binds it in."""
        if name in self.globals:
            return self.module()
        if name in self.nonlocals:
            scope = self.parent
            while scope is not None and (scope.kind != "function" or name not in scope.bindings):
                scope = scope.parent
            return scope or self.module()
        return self

    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def lookup(self, name: str) -> list[Binding]:
        """The bindings a read of ``name`` here can see ([] for a builtin or an unbound name)."""
        if name in self.globals:
            return self.module().bindings.get(name, [])
        if name in self.bindings:
            return self.bindings[name]
        scope = self.parent
        while scope is not None:
            if scope.kind != "class" and name in scope.bindings:
                return scope.bindings[name]
            scope = scope.parent
        return []


class Scopes(ast.NodeVisitor):
    """Every scope of a module and the scope of every name read in it (``scope_of``)."""

    def __init__(self, tree: ast.AST) -> None:
        self.reads: dict[int, Scope] = {}
        self.scope = Scope("module", None)
        self.visit(tree)

    def scope_of(self, node: ast.Name) -> Scope | None:
        return self.reads.get(id(node))

    # --- scopes ----------------------------------------------------------
    def _inside(self, kind: str, body: list[ast.AST]) -> None:
        outer, self.scope = self.scope, Scope(kind, self.scope)
        for node in body:
            if isinstance(node, ast.AST):
                self._declare(node)
        for node in body:
            self.visit(node)
        self.scope = outer

    def _declare(self, node: ast.AST) -> None:
        """``global`` and ``nonlocal`` apply to the whole function, wherever they stand."""
        for sub in _own_nodes(node):
            if isinstance(sub, ast.Global):
                self.scope.globals.update(sub.names)
            elif isinstance(sub, ast.Nonlocal):
                self.scope.nonlocals.update(sub.names)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
            for annotation in _annotations(node.args) + ([node.returns] if node.returns else []):
                self.visit(annotation)
            self.scope.bind(node.name, OWN)
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(arguments.defaults):]],
                            arguments.defaults))
        defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
        outer, self.scope = self.scope, Scope("function", self.scope)
        for argument in [*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
            if argument is not None:
                default = defaults.get(argument.arg)
                # A default is what the name holds when the caller passes nothing: not decided.
                self.scope.bind(argument.arg, OWN)
                if default is not None:
                    self.scope.bind(argument.arg, Binding(value=default))
        body = node.body if isinstance(node.body, list) else [node.body]
        for sub in body:
            self._declare(sub)
        for sub in body:
            self.visit(sub)
        self.scope = outer

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expression in [*node.bases, *(k.value for k in node.keywords), *node.decorator_list]:
            self.visit(expression)
        self.scope.bind(node.name, OWN)
        self._inside("class", node.body)

    def visit_comprehension_scope(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        self.visit(node.generators[0].iter)  # evaluated in the enclosing scope
        outer, self.scope = self.scope, Scope("comprehension", self.scope)
        for index, generator in enumerate(node.generators):
            if index:
                self.visit(generator.iter)
            self._bind_target(generator.target, generator.iter, loop=True)
            for condition in generator.ifs:
                self.visit(condition)
        for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
            self.visit(part)
        self.scope = outer

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_comprehension_scope

    # --- bindings --------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.scope.bind(alias.asname, Binding(path=alias.name))
            else:
                head = alias.name.split(".")[0]
                self.scope.bind(head, Binding(path=head))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            if alias.name != "*":
                path = f"{module}.{alias.name}" if module else alias.name
                self.scope.bind(alias.asname or alias.name, Binding(path=path))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._bind_target(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        for part in (node.value, node.annotation):
            if part is not None:
                self.visit(part)
        if node.value is not None:
            self._bind_target(node.target, node.value)
        else:
            self._visit_target(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self._bind_target(node.target, None)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        scope = self.scope
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent  # := in a comprehension binds in the function around it
        scope.bind(node.target.id, Binding(value=node.value))

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._bind_target(node.target, node.iter, loop=True)
        for sub in [*node.body, *node.orelse]:
            self.visit(sub)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
        for sub in node.body:
            self.visit(sub)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.scope.bind(node.name, OWN)
        for sub in node.body:
            self.visit(sub)

    def visit_MatchAs(self, node: ast.AST) -> None:
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if name:
                self.scope.bind(name, OWN)
        self.generic_visit(node)

    visit_MatchStar = visit_MatchMapping = visit_MatchAs

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.reads[id(node)] = self.scope
        else:
            self.scope.bind(node.id, OWN)

    def _bind_target(self, target: ast.expr, value: ast.expr | None, loop: bool = False) -> None:
        """Bind the names of an assignment's (or a loop's) target to what they receive."""
        if isinstance(target, ast.Name):
            if loop:
                elements = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else None
                self.scope.bind(target.id, Binding(elements=tuple(elements)) if elements is not None else OWN)
            else:
                self.scope.bind(target.id, Binding(value=value) if value is not None else OWN)
        elif isinstance(target, (ast.Tuple, ast.List)) and not loop and isinstance(value, (ast.Tuple, ast.List)) \
                and len(value.elts) == len(target.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
            for sub, part in zip(target.elts, value.elts):
                self._bind_target(sub, part)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            parts = tuple(e.value if isinstance(e, ast.Starred) else e for e in value.elts)
            for name in _names(target):  # an unpacking that cannot be paired: any element may be any name's
                self.scope.bind(name, Binding(elements=parts) if parts else OWN)
        else:
            self._visit_target(target)

    def _visit_target(self, target: ast.expr) -> None:
        """A target whose names are values of the file's own (and whatever it reads: ``a[i].b = v``)."""
        self.visit(target)


def _names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _annotations(arguments: ast.arguments) -> list[ast.expr]:
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    return [a.annotation for a in every if a is not None and a.annotation is not None]


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """``node`` and what it holds, not looking inside nested functions, lambdas or classes."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        found.append(current)
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)
    return found
