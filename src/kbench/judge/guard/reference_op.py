"""The static reading behind ``reference-op``: the PyTorch functions and layers a solution's
``ModelNew`` reaches, held against those the reference's ``Model`` computes with."""

from __future__ import annotations

import ast
import copy

from kbench.judge.guard import Finding
from kbench.judge.guard.names import NameReader, matches


class _Calls(NameReader):
    """The PyTorch functions a file calls, and the layer types of the ``self.<layer>(...)`` it calls."""

    def __init__(self, problem_dtype: str | None = None) -> None:
        super().__init__()
        self.problem_dtype = problem_dtype
        self.arguments: list[set[str]] = []  # the judge's inputs among each function's arguments, innermost last
        self.layers: dict[str, str] = {}
        self.calls: set[str] = set()
        self.layer_calls: set[str] = set()

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        if isinstance(value, ast.Call):
            name = self.dotted(value.func) or ""
            for target in node.targets:
                if name.startswith("torch.nn.") and isinstance(target, ast.Attribute) and self.dotted(target.value) == "self":
                    self.layers[target.attr] = name
        self.generic_visit(node)

    def used(self, name: str, node: ast.AST) -> None:
        # A layer built (nn.Linear(...) to hold the weights) is not a layer called: only self.<layer>(...) is.
        built = name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper()
        if name.startswith("torch.") and not built and not matches(name, ALLOCATION):
            self.calls.add(name)
        if name.startswith("self.") and name.count(".") == 1:
            self.layer_calls.add(name.split(".")[1])

    def computed_with(self) -> set[str]:
        return self.calls | {self.layers[n] for n in self.layer_calls if n in self.layers}

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.arguments.append(_judges_inputs(node))
        self.generic_visit(node)
        self.arguments.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If | ast.IfExp) -> None:
        """A branch the judge never takes is not read: a model's usual fallback for a tensor
        off the GPU or of another dtype (``if not x.is_cuda or x.dtype != torch.float32:
        return F.gelu(x)``) never runs when a GPU judges the problem's dtype, and where it does
        run the recorder sees what it calls (runtime.py: ``reference-op``, ``torch-compute``)."""
        self.visit(node.test)
        holds = self.holds_when_judged(node.test)
        for branch, never_taken in ((node.body, holds is False), (node.orelse, holds is True)):
            if not never_taken:
                for child in branch if isinstance(branch, list) else [branch]:
                    self.visit(child)

    visit_IfExp = visit_If

    def holds_when_judged(self, test: ast.expr) -> bool | None:
        """Whether ``test`` holds on a GPU for inputs of the problem's dtype: a test of where
        an argument of the function lives (``x.is_cuda``, ``x.is_cpu``, ``x.device.type ==
        "cuda"``), of its dtype against the problem's (``x.dtype != torch.float32``), or
        ``torch.cuda.is_available()``, joined by not, and, or; None for any other test. Such
        an argument of ``forward`` is an input the judge gives (``_judges_inputs``), on the same
        device and of the same dtype in every call, so the trial the recorder watches takes the
        branch every call takes."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.holds_when_judged(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):  # three-valued: one decisive part decides
            parts = [self.holds_when_judged(value) for value in test.values]
            decisive = isinstance(test.op, ast.Or)
            return decisive if decisive in parts else (not decisive if all(p is not None for p in parts) else None)
        if isinstance(test, ast.Call):
            return True if self.dotted(test.func) == "torch.cuda.is_available" and not test.args else None
        if isinstance(test, ast.Attribute) and test.attr in ("is_cuda", "is_cpu") and self._argument(test.value):
            return test.attr == "is_cuda"
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
                and isinstance(test.left, ast.Attribute)):
            return None
        equal = isinstance(test.ops[0], ast.Eq)
        left, right = test.left, test.comparators[0]
        device = right.value if isinstance(right, ast.Constant) else None
        if left.attr == "type" and isinstance(left.value, ast.Attribute) and left.value.attr == "device" \
                and self._argument(left.value.value) and device in ("cuda", "cpu"):
            return (device == "cuda") == equal
        if left.attr == "dtype" and self._argument(left.value) and (dtype := self.dotted(right)) \
                and dtype.startswith("torch.") and self.problem_dtype:
            return (dtype == f"torch.{self.problem_dtype}") == equal
        return None

    def _argument(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and bool(self.arguments) and node.id in self.arguments[-1]


def _judges_inputs(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The arguments of a ``forward`` that only the judge's inputs fill: none with a default,
    none bound again in its body. A helper's arguments are whatever its caller passes."""
    if function.name != "forward":
        return set()
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    undefaulted = positional[:len(positional) - len(arguments.defaults)] + [
        a for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
    rebound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return {a.arg for a in undefaulted} - rebound

# Calls of the reference that are not operations it computes with: allocation, and the
# set-up around its weights (grad modes, initialisers, generators, dtype queries). A
# level-4 reference initialises its weights under torch.no_grad(), as an honest solution
# building the same weights does: that is no sign of the solution calling the reference.
ALLOCATION = ("torch.empty", "torch.empty_like", "torch.zeros", "torch.zeros_like", "torch.ones", "torch.ones_like",
              "torch.full", "torch.full_like", "torch.arange", "torch.tensor", "torch.nn.Parameter", "torch.nn.Module",
              "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled", "torch.nn.init",
              "torch.Generator", "torch.manual_seed", "torch.device", "torch.Size", "torch.finfo", "torch.iinfo",
              "torch.get_default_dtype")


def _computed_with(tree: ast.Module, nodes: list[ast.stmt], problem_dtype: str | None = None) -> set[str]:
    reader = _Calls(problem_dtype)
    reader.read_scopes(tree)  # what each name is bound to, read from the whole file
    reader.visit(ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], type_ignores=[]))
    for node in nodes:
        reader.visit(node)
    return reader.computed_with()


DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _named(tree: ast.Module, class_name: str) -> list[ast.stmt]:
    return [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]


def _reached_from(tree: ast.Module, class_name: str) -> list[ast.stmt]:
    """The module's statements the class can reach: its own, the top-level code beside it, and
    the functions and classes these name, and so on. An answer often holds a copy of the
    reference program (its ``Model``, its ``get_inputs``) that ``ModelNew`` never uses, or
    builds ``ModelNew`` on it to keep its layers and overrides its ``forward``: a base's
    method the class overrides is not reached unless the class calls it (``super().forward``,
    ``Model.forward(self, x)``). Without the class: the whole module."""
    definitions = {n.name: n for n in tree.body if isinstance(n, DEFINITIONS)}
    if class_name not in definitions:
        return list(tree.body)
    reached = [n for n in tree.body if not isinstance(n, DEFINITIONS)]
    reached.append(definitions.pop(class_name))
    index = 0
    while index < len(reached):
        node = reached[index]
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if isinstance(base, ast.Name) and isinstance(definitions.get(base.id), ast.ClassDef):
                    reached.append(_not_overridden(definitions.pop(base.id), node))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in definitions:
                reached.append(definitions.pop(sub.id))
        index += 1
    return reached


def _not_overridden(base: ast.ClassDef, subclass: ast.ClassDef) -> ast.ClassDef:
    """``base`` without the methods ``subclass`` defines again and never calls up to."""
    own = {n.name for n in subclass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    def up(node: ast.expr) -> bool:  # super() or the base by name
        return isinstance(node, ast.Name) and node.id == base.name or isinstance(node, ast.Call) \
            and isinstance(node.func, ast.Name) and node.func.id == "super"

    called_up = {sub.attr for sub in ast.walk(subclass) if isinstance(sub, ast.Attribute) and up(sub.value)}
    kept = copy.copy(base)
    kept.body = [n for n in base.body if not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                              and n.name in own - called_up)]
    return kept


def reference_op_findings(tree: ast.Module, reference_source: str, problem_dtype: str = "float32") -> list[Finding]:
    """What the solution's ``ModelNew`` reaches, in the branches a GPU judging the problem's
    dtype takes, calls every PyTorch function and layer the reference's ``Model`` calls."""
    try:
        reference = ast.parse(reference_source)
    except (SyntaxError, ValueError):
        return []
    needed = _computed_with(reference, _named(reference, "Model"))
    if needed and needed <= _computed_with(tree, _reached_from(tree, "ModelNew"), problem_dtype):
        return [Finding("reference-op", f"calls every operation the reference computes with: {sorted(needed)}")]
    return []
