"""Static rules: what the solution's syntax tree says before any of it runs.

Names are resolved through the file's imports (``names.py``: ``import
torch.nn.functional as F`` makes ``F.relu`` read as ``torch.nn.functional.relu``),
so aliases do not hide a call; ``reference-op``'s reading is ``reference_op.py``.
Forms that honest code uses are left alone: a ``pass`` in an empty method, a
try/except at import time (optional imports), writing a source file with ``open``.
Computed names (``getattr(torch, "syn" + "chronize")``) defeat any static reading;
they are flagged here and left to the runtime rules.

A kernel solution is read as the judge imports it: without its self-test block
(kbench.judge.worker.self_test), and knowing that the judge seeds the random number
generators itself before it builds a model or draws inputs, so that a seed set at
import or in ``__init__`` changes nothing the judge draws (a seed in ``forward``
stays a finding, and the runtime rules see any change forward makes).
"""

from __future__ import annotations

import ast
import re

from kbench.judge.guard import ALWAYS_FLAG, Finding
from kbench.judge.guard.additions import absent_from_loaded_module as absent_from_loaded, guarded_additions
from kbench.judge.guard.names import SETTERS, Dotted, NameReader, every, matches
from kbench.judge.guard.reference_op import reference_op_findings
from kbench.judge.guard.settings import (PRECISION_NEUTRAL, harmless_autocast, harmless_environment,
                                         harmless_setting)
from kbench.judge.worker.self_test import without_self_tests

COMPILE_PREFIXES = ("torch.compile", "torch.jit", "torch._dynamo", "torch._inductor", "torch.export")
# What keeps a function out of a compiler, or asks whether one runs (always no here: the judge
# compiles no candidate): answers written to work under torch.compile use them; they compile nothing.
COMPILE_EXCLUSIONS = ("torch._dynamo.disable", "torch._dynamo.allow_in_graph", "torch._dynamo.is_compiling",
                      "torch.jit.ignore", "torch.jit.unused", "torch.jit.is_scripting", "torch.jit.is_tracing",
                      "torch.jit.Final", "torch.jit.annotate")  # typing: Final[int] as an annotation
KERNEL_DECORATOR_PREFIXES = ("triton.", "numba.cuda.jit", "cupy.")
KERNEL_CALLS = (
    "triton.jit",  # the decorator called by hand: triton.jit(fn)
    "numba.cuda.jit",
    "torch.utils.cpp_extension.load_inline",
    "torch.utils.cpp_extension.load",
    "cupy.RawKernel",
    "cupy.RawModule",
)
# Frames, the heap, and hooks that see the process run: profile and trace hooks (which fire
# when the judge's functions call and return), audit hooks, and PyTorch's dispatch and
# function mode stacks (which see every operation, and show whether someone watches).
INTROSPECTION = ("gc.", "sys._getframe", "sys._current_frames", "inspect.currentframe", "inspect.stack",
                 "inspect.getouterframes", "inspect.getinnerframes", "inspect.trace", "traceback.walk_stack",
                 "sys.getrefcount", "sys.setprofile", "sys.settrace", "sys.getprofile", "sys.gettrace",
                 "sys._setprofileallthreads", "sys._settraceallthreads", "sys.monitoring", "sys.addaudithook",
                 "threading.setprofile", "threading.settrace", "threading.setprofile_all_threads",
                 "threading.settrace_all_threads", "threading.getprofile", "threading.gettrace",
                 "torch.utils._python_dispatch", "torch._C._len_torch_dispatch_stack",
                 "torch._C._push_on_torch_dispatch_stack", "torch._C._get_dispatch_stack_at",
                 "torch._C._len_torch_function_stack", "torch._C._push_on_torch_function_stack",
                 "torch.overrides.TorchFunctionMode")
# gc.collect frees memory (an answer's habit before a large workspace) and shows nothing of the heap.
GC_FREEING = "gc.collect"
FRAME_ATTRIBUTES = {"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame"}
EXITS = ("sys.exit", "os._exit", "os.abort", "os.kill", "os.killpg", "signal.", "exit", "quit")
OWN_FILE_USES = ("os.fdopen", "os.write", "os.close", "os.fsync")  # on a descriptor of tempfile.mkstemp
RAW_IO = ("os.write", "os.read", "os.dup", "os.dup2", "os.fdopen", "os.open", "os.pipe", "os.sendfile", "os.close")
# A path in a string is no effect: it flags (undecided) where it names a process's descriptors, memory
# or standard streams; what is opened is the sandbox's and the results channel's to decide. The
# system's own information (/proc/cpuinfo, read to choose build flags) is no finding.
PROC_PATH = re.compile(r"/proc/|/dev/fd|/dev/std")
SYSTEM_INFORMATION = re.compile(r"/proc/(cpuinfo|meminfo|loadavg|version|stat|uptime|sys/|driver/)")
THREADING_MODULES = ("threading", "_thread", "concurrent", "multiprocessing", "subprocess", "asyncio")
# What starts nothing: threading's locks (around a launch) and thread-local storage, and the
# count of CPUs (to size a CPU kernel's threads); the modules themselves, imported, start nothing.
THREAD_PRIMITIVES = ("threading.Lock", "threading.RLock", "threading.local", "threading.Event",
                     "threading.Condition", "threading.Semaphore", "threading.BoundedSemaphore",
                     "multiprocessing.cpu_count", "concurrent.futures.as_completed", "concurrent.futures.wait")
# A pool entered by `with` (several extensions built at once): leaving the block joins its threads.
JOINED_POOLS = ("concurrent.futures.ThreadPoolExecutor",)
# Modules whose import alone does nothing a rule names: what of them is used decides. Passed around
# as a value (an alias, an argument) a module hides what of it is used: that is its rule's finding.
MODULES_ALONE = {"threading": "threads", "multiprocessing": "threads", "concurrent": "threads",
                 "concurrent.futures": "threads", "subprocess": "threads", "_thread": "threads", "asyncio": "threads",
                 "torch.jit": "torch-compile", "torch._dynamo": "torch-compile", "gc": "introspection",
                 "signal": "process-exit"}
PROCESS_CALLS = ("os.fork", "os.forkpty", "os.system", "os.popen", "os.spawn", "os.exec", "os.posix_spawn")
HALF_NAMES = ("torch.float16", "torch.half", "torch.bfloat16", "triton.language.float16",
              "triton.language.bfloat16", "torch.autocast", "torch.cuda.amp", "torch.amp")
HALF_METHODS = {"half", "bfloat16"}
HALF_IN_SOURCE = re.compile(r"\b(__half2?|half2|__nv_bfloat162?|__float2half\w*|__float2bfloat16\w*|wmma::)")
GLOBAL_STATE_CALLS = ("torch.set_default_dtype", "torch.set_default_tensor_type", "torch.set_default_device",
                      "torch.set_float32_matmul_precision", "torch.manual_seed", "torch.seed",
                      "torch.set_rng_state", "torch.random.", "torch.cuda.manual_seed", "torch.cuda.set_rng_state",
                      "torch.cuda.seed", "torch.use_deterministic_algorithms", "torch.set_flush_denormal",
                      "torch.set_num_threads", "random.seed", "numpy.random.seed")
SEEDS = ("torch.manual_seed", "torch.seed", "torch.random.manual_seed", "torch.random.seed", "torch.cuda.manual_seed",
         "torch.cuda.manual_seed_all", "torch.cuda.seed", "torch.cuda.seed_all", "random.seed", "numpy.random.seed")
ENVIRONMENT_WRITES = ("os.environ.setdefault", "os.environ.__setitem__", "os.putenv")
# Printing redirected (a build's output silenced): the judge's answers go on a pipe of their own.
OUTPUT_STREAMS = ("sys.stdout", "sys.stderr")
HARNESS_NAMES = ("kbench", "sys.modules", "__main__", "builtins", "__builtins__")
DYNAMIC = ("getattr", "setattr", "delattr", "__import__", "importlib.import_module", "eval", "exec",
           "compile", "vars", "globals")
STREAMS = ("torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.ExternalStream", "torch.Stream")
STREAM_IN_SOURCE = re.compile(r"\bcudaStreamCreate\w*|\bcudaStreamNonBlocking\b")


def _within(name: str, prefixes: tuple[str, ...], harmless: tuple[str, ...]) -> bool:
    """``name`` inside ``prefixes``, neither one of ``MODULES_ALONE`` itself nor inside ``harmless``."""
    return matches(name, prefixes) and name not in MODULES_ALONE and not matches(name, harmless)


def _compiles(name: str) -> bool:
    return _within(name, COMPILE_PREFIXES, COMPILE_EXCLUSIONS)


def _introspects(name: str) -> bool:
    return _within(name, ("gc",) + INTROSPECTION, (GC_FREEING,))


def _starts_threads(name: str) -> bool:
    return _within(name, THREADING_MODULES, THREAD_PRIMITIVES)


class _Reader(NameReader):
    def __init__(self, low_precision_applies: bool, reseeded: bool = False):
        super().__init__()
        self.findings: list[Finding] = []
        self.has_kernel = False
        self.functions: list[str] = []  # the names of the functions the reading is inside, outermost first
        self.low_precision_applies = low_precision_applies
        self.reseeded = reseeded  # the judge seeds before every build and draw (a kernel solution)
        self.docstrings: set[int] = set()
        self.bindings: dict[str, list[ast.expr | None]] = {}  # what each name is bound to (None: not by `name = value`)
        # half dtypes named only to be compared with, or as a lookup's keys; an autocast switched off
        self.precision_kept: set[int] = set()
        self.chain_parts: set[int] = set()  # the names and attributes inside a longer attribute chain
        self.joined: set[int] = set()  # a thread pool's calls entered by `with`, which joins its threads
        self.tree: ast.Module = ast.Module(body=[], type_ignores=[])

    def visit_Module(self, node: ast.Module) -> None:
        """Docstrings are prose: a path or a type named there is not code."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and sub.body:
                first = sub.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    self.docstrings.add(id(first.value))
        self.tree, self.bindings = node, _bindings(node)
        self.additions = guarded_additions(node, self.dotted)
        self.read_scopes(node)
        self.generic_visit(node)

    def add(self, rule: str, message: str, node: ast.AST, name: str | None = None) -> None:
        """A finding; one read from a name the file binds to the module and to something else
        too is a flag (``undecided``), not a rejection: the name is no evidence of which it is."""
        undecided = getattr(name, "undecided", "")
        if undecided and rule not in ALWAYS_FLAG:
            rule, message = "undecided", f"{rule}: {message} ({undecided})"
        self.findings.append(Finding(rule, message, getattr(node, "lineno", None)))

    def imported(self, name: str, node: ast.AST) -> None:
        if _compiles(name):
            self.add("torch-compile", f"imports {name}", node)
        if _starts_threads(name) and name not in JOINED_POOLS:  # imported by name: where it is used decides
            self.add("threads", f"imports {name}", node)
        if matches(name, ("kbench", "__main__")):
            self.add("harness-access", f"imports {name}", node)
        if matches(name, ("signal",)) and name not in MODULES_ALONE:
            self.add("process-exit", f"imports {name}", node)
        if _introspects(name):
            self.add("introspection", f"imports {name}", node)

    # --- structure -------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            name = self.dotted(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""
            if matches(name, KERNEL_DECORATOR_PREFIXES) or name.startswith("triton"):
                self.has_kernel = True
            if _compiles(name):
                self.add("torch-compile", f"decorated with {name}", decorator, name)
        self.functions.append(node.name)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Try(self, node: ast.Try) -> None:
        if self.functions:
            for handler in node.handlers:
                if self._computes_or_returns(handler):
                    self.add("fallback", "an exception handler inside the model's code computes a result", handler)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def _computes_or_returns(self, handler: ast.ExceptHandler) -> bool:
        for sub in ast.walk(handler):
            if isinstance(sub, ast.Return) and sub.value is not None and not _constant(sub.value):
                return True  # a default (the SM count when the device cannot be asked) is no result
            if isinstance(sub, ast.Call):
                name = self.dotted(sub.func) or ""
                if name.startswith("torch") or (isinstance(sub.func, ast.Attribute) and name.startswith("self.")):
                    return True
        return False

    # --- uses ------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if name := self.called(node):
            self.used(name, node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "load_inline":  # whatever holds the loader
            self.has_kernel = True
        if isinstance(node.func, ast.Attribute) and node.func.attr in HALF_METHODS and self.low_precision_applies:
            self.add("low-precision", f".{node.func.attr}() in a float32 problem", node)
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg == "allow_tf32" and isinstance(value, ast.Constant) and value.value is True:
                self.add("low-precision", "allow_tf32=True", node)
            if keyword.arg == "input_precision" and isinstance(value, ast.Constant) and "tf32" in str(value.value):
                self.add("low-precision", f"input_precision={value.value!r}", node)
        if harmless_autocast(name, node, self.dotted):  # torch.autocast("cuda", enabled=False): float32 kept
            self.precision_kept.update(id(part) for part in [node.func, *node.args, *(k.value for k in node.keywords)])
        if name in ENVIRONMENT_WRITES:
            how = "setdefault" if name.endswith("setdefault") else "set"
            self.environment_set(node.args[0] if node.args else None, node.args[1] if len(node.args) > 1 else None,
                                 node, how, name)
        if name == "os.environ.update":
            pairs = [(k, v) for arg in node.args if isinstance(arg, ast.Dict) for k, v in zip(arg.keys, arg.values)]
            pairs += [(ast.Constant(keyword.arg) if keyword.arg else None, keyword.value) for keyword in node.keywords]
            for key, value in pairs if pairs or not node.args else [(None, None)]:
                self.environment_set(key, value, node, "set", name)
        if name in SETTERS and node.args:
            target = self.dotted(node.args[0]) or ""
            if target and not target.startswith("self") and target.split(".")[0] in self.aliases.values():
                self.add("monkeypatch", f"{name} on module {target}", node, target)
        self.generic_visit(node)

    def used(self, name: str, node: ast.AST) -> None:
        """A call of ``name`` (and of what the name's other bindings make it: each undecided)."""
        for each in every(name):
            self._used(each if each is name else _undecided(each, name), node)

    def _used(self, name: str, node: ast.AST) -> None:
        if name in KERNEL_CALLS or name.endswith(".load_inline") or name == "load_inline":
            self.has_kernel = True
        checks = [
            (COMPILE_PREFIXES, "torch-compile"),
            (INTROSPECTION, "introspection"),
            (EXITS, "process-exit"),
            (RAW_IO, "raw-io"),
            (PROCESS_CALLS, "threads"),
            (GLOBAL_STATE_CALLS, "global-state"),
            (HARNESS_NAMES, "harness-access"),
            (DYNAMIC, "dynamic-access"),
            (STREAMS, "side-stream"),
        ]
        pinned = isinstance(node, ast.Call) and bool(node.args) and harmless_setting(name, node.args[0], self.dotted)
        current = name == "torch.cuda.stream" and isinstance(node, ast.Call) and bool(node.args) \
            and self._current_stream(node.args[0])
        harmless = {"global-state": self._harmless_seed(name) or pinned, "introspection": not _introspects(name),
                    "raw-io": name in OWN_FILE_USES and self._own_file(node),
                    "side-stream": current, "dynamic-access": _named_by_a_constant(name, node),
                    "torch-compile": not _compiles(name)}
        for prefixes, rule in checks:
            if matches(name, prefixes) and not harmless.get(rule):
                self.add(rule, f"uses {name}", node, name)
        if _starts_threads(name) and id(node) not in self.joined:
            self.add("threads", f"uses {name}", node, name)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        """``with ThreadPoolExecutor() as pool:`` joins the pool's threads where the block ends,
        if the pool is not used past it (a pool kept could be started again)."""
        for item in node.items:
            call, name = item.context_expr, item.optional_vars
            if isinstance(call, ast.Call) and self.dotted(call.func) in JOINED_POOLS and (
                    name is None or isinstance(name, ast.Name) and self._used_only_within(name.id, node)):
                self.joined.update((id(call), id(call.func)))
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def _used_only_within(self, name: str, block: ast.stmt) -> bool:
        inside = {id(sub) for sub in ast.walk(block)}
        return all(id(sub) in inside for sub in ast.walk(self.tree) if isinstance(sub, ast.Name) and sub.id == name)

    def _current_stream(self, node: ast.AST) -> bool:
        """The stream already current (``torch.cuda.current_stream(...)``, the default stream),
        directly or through a name bound to nothing else: entering it makes no stream."""
        if isinstance(node, ast.Name):
            values = self.bindings.get(node.id, [])
            return bool(values) and all(isinstance(v, ast.Call) and self._current_stream(v) for v in values)
        return isinstance(node, ast.Call) and self.dotted(node.func) in ("torch.cuda.current_stream",
                                                                         "torch.cuda.default_stream")

    def _own_file(self, node: ast.AST) -> bool:
        """``fd, path = tempfile.mkstemp(suffix=".cu")``, then ``os.fdopen(fd, "w")`` to write a
        source for ``cpp_extension.load``: a descriptor the solution opened on a file of its
        own, bound to nothing else, is no channel of the judge's."""
        descriptor = node.args[0] if isinstance(node, ast.Call) and node.args else None
        if not isinstance(descriptor, ast.Name):
            return False
        made = [a for a in ast.walk(self.tree) if isinstance(a, ast.Assign) and isinstance(a.value, ast.Call)
                and self.dotted(a.value.func) == "tempfile.mkstemp" and isinstance(a.targets[0], ast.Tuple)
                and a.targets[0].elts and isinstance(a.targets[0].elts[0], ast.Name)
                and a.targets[0].elts[0].id == descriptor.id]
        return bool(made) and len(made) == len(self.bindings.get(descriptor.id, []))

    def _harmless_seed(self, name: str) -> bool:
        return self.reseeded and matches(name, SEEDS) and "forward" not in self.functions

    def loaded(self, name: str, node: ast.AST) -> None:
        """A name read as a value (called or not), resolved through the imports."""
        for each in every(name):
            self._loaded(each if each is name else _undecided(each, name), node)

    def _loaded(self, name: str, node: ast.AST) -> None:
        if self.low_precision_applies and matches(name, HALF_NAMES) and not matches(name, PRECISION_NEUTRAL) \
                and id(node) not in self.precision_kept:
            self.add("low-precision", f"uses {name} in a float32 problem", node, name)
        if matches(name, ("sys.modules", "__main__", "__builtins__", "kbench")):
            self.add("harness-access", f"uses {name}", node, name)
        if _introspects(name):
            self.add("introspection", f"uses {name}", node, name)
        if _starts_threads(name) and id(node) not in self.joined:
            self.add("threads", f"uses {name}", node, name)
        if name in MODULES_ALONE:
            self.add(MODULES_ALONE[name], f"uses {name}", node, name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRIBUTES:
            self.add("introspection", f"reads .{node.attr}", node)
        name = self.dotted(node)
        if name and isinstance(node.ctx, ast.Load) and id(node) not in self.chain_parts:
            self.loaded(name, node)
        if name:  # the chain is read whole: ``gc.collect`` is not also ``gc`` read as a value
            part = node.value
            while isinstance(part, ast.Attribute):
                self.chain_parts.add(id(part))
                part = part.value
            if isinstance(part, ast.Name):
                self.chain_parts.add(id(part))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        name = self.dotted(node)
        if name and isinstance(node.ctx, ast.Load):
            self.loaded(name, node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and id(node) not in self.chain_parts and (name := self.dotted(node)):
            self.loaded(name, node)

    def visit_Assign(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            environ = self.dotted(target.value) if isinstance(target, ast.Subscript) else None
            if environ == "os.environ":
                value = node.value if isinstance(node, ast.Assign) else None
                self.environment_set(target.slice, value, node, "set", environ)
                continue
            for stored in _stored_attributes(target):
                name = self.dotted(stored) or ""
                root = name.split(".")[0]
                if name.startswith("torch.backends"):
                    if not (isinstance(node, ast.Assign) and harmless_setting(name, node.value, self.dotted)):
                        self.add("global-state", f"assigns {name}", node, name)
                elif root not in ("", "self") and root in self.modules() and name not in OUTPUT_STREAMS and \
                        id(node) not in self.additions and not absent_from_loaded(name):  # additions.py
                    self.add("monkeypatch", f"assigns {name}", node, name)
        self.generic_visit(node)

    visit_AugAssign = visit_Assign
    visit_AnnAssign = visit_Assign

    def environment_set(self, key: ast.AST | None, value: ast.AST | None, node: ast.AST, how: str,
                        name: str | None) -> None:
        """``os.environ[key] = value`` and its spellings: a build's variables, and one the judge
        sets in every worker, are no finding (settings.harmless_environment)."""
        if harmless_environment(key, value, how):
            return
        shown = f"the environment variable {key.value!r}" if isinstance(key, ast.Constant) else \
            "an environment variable of a computed name"
        self.add("global-state", f"sets {shown}", node, name)

    def modules(self) -> set[str]:
        return {full.split(".")[0] for full in self.aliases.values()}

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        reads_shape = any(
            isinstance(s, ast.Attribute) and s.attr == "shape"
            or isinstance(s, ast.Call) and isinstance(s.func, ast.Attribute) and s.func.attr == "size"
            for s in sides
        )
        literal = any(isinstance(s, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) for e in s.elts)
                      for s in sides)
        if reads_shape and literal:
            self.add("shape-special-case", "the input shape is compared with literal values", node)
        self._dtype_keys(sides)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        self._dtype_keys([key for key in node.keys if key is not None])
        self.generic_visit(node)

    def _dtype_keys(self, nodes: list[ast.expr]) -> None:
        """A kernel written for several dtypes asks which one it has (``x.dtype == torch.float16``,
        ``{torch.bfloat16: 64, torch.float32: 32}[x.dtype]``): that lowers no precision."""
        for node in nodes:
            for named in node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]:
                if isinstance(named, ast.Attribute):  # torch.float16; x.to(torch.float16) > 0 is a conversion
                    self.precision_kept.add(id(named))

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            if any(not SYSTEM_INFORMATION.match(node.value, m.start()) for m in PROC_PATH.finditer(node.value)):
                self.add("undecided", "raw-io: names a /proc or /dev/fd path (a string: what is opened, the "
                         "sandbox and the results channel decide)", node)
            if self.low_precision_applies and HALF_IN_SOURCE.search(node.value):
                self.add("low-precision", "half-precision types in kernel source", node)
            if STREAM_IN_SOURCE.search(node.value):
                self.add("side-stream", "creates CUDA streams in kernel source", node)
            if "__global__" in node.value:
                self.has_kernel = True


def check_source(source: str, problem_dtype: str = "float32", reference_source: str | None = None,
                 kernel_solution: bool = True) -> list[Finding]:
    """Every static finding for a solution; none for source that does not parse
    (the build then fails with the parser's message). A kernel solution is read as the
    judge imports it (the module's docstring); ``kernel_solution=False`` reads a file as
    any program may run it (a repository's file: its self-test block, every seed)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    if kernel_solution:
        tree = without_self_tests(tree)
    reader = _Reader(low_precision_applies=problem_dtype == "float32", reseeded=kernel_solution)
    reader.visit(tree)
    findings = reader.findings
    if not reader.has_kernel:
        findings.append(Finding("no-kernel", "defines no Triton kernel and builds no C++/CUDA extension"))
    if reference_source:
        findings += reference_op_findings(tree, reference_source, problem_dtype)
    unique: dict[tuple[str, int | None], Finding] = {}
    for finding in findings:
        unique.setdefault((finding.rule, finding.line), finding)
    return list(unique.values())


def _named_by_a_constant(name: str, node: ast.AST) -> bool:
    """``getattr(self, "bias", None)``, ``importlib.import_module("math")``: the name is read
    (names.py resolves it, and the rules see what it names); only a computed one hides it."""
    position = {"getattr": 1, "setattr": 1, "delattr": 1, "__import__": 0, "importlib.import_module": 0}.get(name)
    if position is None or not isinstance(node, ast.Call) or len(node.args) <= position:
        return False
    argument = node.args[position]
    return isinstance(argument, ast.Constant) and isinstance(argument.value, str)


def _bindings(tree: ast.Module) -> dict[str, list[ast.expr | None]]:
    """Every name the module binds, with the values ``name = value`` gives it; ``None`` for
    any other binding (a tuple target, a loop, an argument, ``with ... as``, ``+=``)."""
    simple = {id(node.targets[0]): node.value for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}
    bindings: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bindings.setdefault(node.id, []).append(simple.get(id(node)))
        elif isinstance(node, ast.arg):
            bindings.setdefault(node.arg, []).append(None)
    return bindings


def _undecided(name: str, like: str) -> Dotted:
    """``name`` as undecided as ``like``: another binding of the same head."""
    other = Dotted(name)
    other.undecided = getattr(like, "undecided", "")
    return other


def _constant(node: ast.AST) -> bool:
    """A literal, or a tuple or list of them."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(element) for element in node.elts)
    return isinstance(node, ast.Constant)


def _stored_attributes(target: ast.AST) -> list[ast.Attribute]:
    """The attributes an assignment to ``target`` changes: ``a.b = v`` changes ``a.b``,
    ``a.b[i] = v`` (``torch.__dict__["softmax"] = f``) too; what the index reads
    (``x[torch.arange(n)] += v``) is not assigned."""
    if isinstance(target, ast.Attribute):
        return [target]
    if isinstance(target, ast.Subscript):
        return _stored_attributes(target.value)
    if isinstance(target, ast.Starred):
        return _stored_attributes(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [attribute for element in target.elts for attribute in _stored_attributes(element)]
    return []
