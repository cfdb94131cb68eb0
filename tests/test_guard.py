"""The guard's static rules and its policy, without running anything."""

import sys

import pytest

from kbench.judge.guard import RULES, action
from kbench.judge.guard.static import check_source
from kbench.judge.worker.loading import import_solution

KERNEL = '''
import torch
import triton
import triton.language as tl

@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)

class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        {body}
        kernel[(1,)](x, y, x.numel(), BLOCK=1024)
        return y
'''


def rules(source):
    return {f.rule for f in check_source(source)}


def with_body(body, header=""):
    return header + KERNEL.replace("{body}", body)


def test_an_honest_kernel_has_no_findings():
    assert rules(with_body("pass")) == set()


@pytest.mark.parametrize(
    "body, header, rule",
    [
        ("x = torch.compile(lambda t: t)(x)", "", "torch-compile"),
        ("f = torch.jit.script(torch.relu)", "", "torch-compile"),
        ("try:\n            kernel[(1,)](x, y, 1, BLOCK=4)\n        except Exception:\n            return torch.relu(x)", "", "fallback"),
        ("objs = gc.get_objects()", "import gc\n", "introspection"),
        ("frame = sys._getframe(1).f_back", "import sys\n", "introspection"),
        ("sys.exit(0)", "import sys\n", "process-exit"),
        ("os._exit(0)", "import os\n", "process-exit"),
        ("os.write(4, b'{}')", "import os\n", "raw-io"),
        ("fds = os.listdir('/proc/self/fd')", "import os\n", "undecided"),  # a string: a flag
        ("t = threading.Thread(target=print)", "import threading\n", "threads"),
        ("x = x.half()", "", "low-precision"),
        ("x = x.to(torch.bfloat16)", "", "low-precision"),
        ("torch.backends.cudnn.allow_tf32 = True", "", "global-state"),
        ("torch.set_default_dtype(torch.float64)", "", "global-state"),
        ("torch.manual_seed(0)", "", "global-state"),
        ("time.perf_counter = lambda: 0.0", "import time\n", "monkeypatch"),
        ("setattr(torch.cuda, 'synchronize', print)", "", "monkeypatch"),
        ("torch.__dict__['softmax'] = print", "", "monkeypatch"),
        ("m = sys.modules['kbench.judge.protocol.timing']", "import sys\n", "harness-access"),
        ("import kbench", "", "harness-access"),
        ("f = getattr(torch, 'syn' + 'chronize')", "", "dynamic-access"),
        ("s = torch.cuda.Stream()", "", "side-stream"),
        ("big = x.shape == (16384, 32768)", "", "shape-special-case"),
    ],
)
def test_each_static_rule_fires_on_its_form(body, header, rule):
    assert rule in rules(with_body(body, header))


MKSTEMP = "fd, path = tempfile.mkstemp(suffix='.cu')\n"


@pytest.mark.parametrize("source", [
    MKSTEMP + "with os.fdopen(fd, 'w') as f:\n    f.write('__global__ void k() {}')\n",
    MKSTEMP + "os.write(fd, b'__global__ void k() {}')\nos.fsync(fd)\nos.close(fd)\n",
    "from tempfile import mkstemp\nfd, path = mkstemp()\nos.close(fd)\n",
])
def test_a_file_the_solution_made_for_its_own_source_is_no_raw_io(source: str) -> None:
    """Writing a CUDA source for cpp_extension.load through the descriptor mkstemp returns."""
    assert "raw-io" not in rules(with_body("pass", "import os\nimport tempfile\n" + source))


@pytest.mark.parametrize("source", [
    MKSTEMP + "fd = 4\nos.write(fd, b'{}')\n",  # bound again: the judge's channel, perhaps
    MKSTEMP + "os.write(fd + 1, b'{}')\n",
    "fd, path = os.pipe()\nos.write(fd, b'{}')\n",
    MKSTEMP + "os.dup2(fd, 1)\n",
    MKSTEMP + "for fd in range(3, 9):\n    os.close(fd)\n",
])
def test_a_descriptor_not_of_its_own_file_is_raw_io(source: str) -> None:
    assert "raw-io" in rules(with_body("pass", "import os\nimport tempfile\n" + source))


@pytest.mark.parametrize(
    "body, header, rule",
    [
        ("x = torch.__dict__['compile'](lambda t: t)(x)", "", "torch-compile"),
        ("x = vars(torch)['compile'](lambda t: t)(x)", "", "torch-compile"),
        ("x = getattr(torch, 'compile')(lambda t: t)(x)", "", "torch-compile"),
        ("x = operator.attrgetter('compile')(torch)(lambda t: t)(x)", "import operator\n", "torch-compile"),
        ("x = importlib.import_module('torch._dynamo').optimize()(x)", "import importlib\n", "torch-compile"),
        ("objs = __import__('gc').get_objects()", "", "introspection"),
        ("importlib.import_module('sys').setprofile(print)", "import importlib\n", "introspection"),
        ("type.__setattr__(torch.Tensor, 'relu', print)", "", "monkeypatch"),
        ("object.__setattr__(torch.cuda, 'synchronize', print)", "", "monkeypatch"),
        ("x = torch.__dict__.get('compile')(lambda t: t)(x)", "", "torch-compile"),
        ("x = torch.__getattribute__('compile')(lambda t: t)(x)", "", "torch-compile"),
        ("x = object.__getattribute__(torch, 'compile')(lambda t: t)(x)", "", "torch-compile"),
        ("x = inspect.getattr_static(torch, 'compile')(lambda t: t)(x)", "import inspect\n", "torch-compile"),
        ("operator.methodcaller('setprofile', print)(sys)", "import operator\nimport sys\n", "introspection"),
        ("getattr(importlib.import_module('sys'), 'settrace')(print)", "import importlib\n", "introspection"),
    ],
)
def test_names_spelled_out_in_constant_strings_are_resolved(body, header, rule):
    """Routes around plain attribute access reach the same names, and the same rules."""
    assert rule in rules(with_body(body, header))


@pytest.mark.parametrize(
    "body, header",
    [
        ("sys.setprofile(print)", "import sys\n"),
        ("hook = sys.settrace", "import sys\n"),
        ("watched = sys.getprofile() is not None", "import sys\n"),
        ("sys.monitoring.use_tool_id(3, 'x')", "import sys\n"),
        ("sys.addaudithook(print)", "import sys\n"),
        ("pass", "from sys import setprofile\n"),
        ("watched = torch._C._len_torch_dispatch_stack() > 0", ""),
        ("pass", "from torch.utils._python_dispatch import TorchDispatchMode\n"),
        ("pass", "from torch.overrides import TorchFunctionMode\n"),
    ],
)
def test_profile_trace_and_dispatch_hooks_are_introspection(body, header):
    """Hooks that fire when the judge's functions run (moving work out of the timed
    window), and the mode stacks that show whether someone records the operations."""
    assert "introspection" in rules(with_body(body, header))


@pytest.mark.parametrize(
    "body, header",
    [
        ("pass", "from threading import Thread\n"),
        ("t = threading.Timer(1.0, print)", "import threading\n"),
        ("getattr(threading, 'Thread')(target=print).start()", "import threading\n"),
        ("pool = ThreadPoolExecutor(2)", "from concurrent.futures import ThreadPoolExecutor\n"),
        ("pass", "import threading\nclass Launcher(threading.Thread):\n    pass\n"),
        ("pass", "from threading import *\n"),
        ("pool = multiprocessing.Pool(2)", "import multiprocessing\n"),
        ("t = threading", "import threading\n"),
        ("r = subprocess.run(['nvcc', '--version'])", "import subprocess\n"),
        ("pass", "import concurrent.futures\npool = concurrent.futures.ThreadPoolExecutor()\npool.__enter__()\n"),
        ("pass", "import concurrent.futures as cf\nwith cf.ProcessPoolExecutor() as pool:\n    pass\n"),
        ("pass", "from concurrent.futures import ThreadPoolExecutor as P\nMake = P\nwith Make() as pool:\n    pass\n"),
        ("pass", "from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor() as pool:\n    pass\n"
                 "pool._shutdown = False\n"),  # the pool used past its block could be started again
        ("m = concurrent.futures", "import concurrent.futures\n"),
    ],
)
def test_starting_a_thread_is_a_finding_however_it_is_named(body, header):
    assert "threads" in rules(with_body(body, header))


@pytest.mark.parametrize("header", [
    "from concurrent.futures import ThreadPoolExecutor, as_completed\nwith ThreadPoolExecutor(2) as pool:\n"
    "    jobs = [pool.submit(str, i) for i in range(2)]\n    built = [job.result() for job in as_completed(jobs)]\n",
    "import concurrent.futures\nwith concurrent.futures.ThreadPoolExecutor() as pool:\n"
    "    built = list(pool.map(str, [1]))\n",
])
def test_a_thread_pool_entered_by_with_joins_its_threads(header):
    """Several extensions built at once: leaving the block joins the pool's threads."""
    assert rules(with_body("pass", header)) == set()


def test_threading_locks_and_thread_local_storage_start_nothing():
    header = "import threading\nfrom threading import RLock\nLOCK = threading.Lock()\nLOCAL = threading.local()\n"
    assert rules(with_body("with LOCK:\n            LOCAL.calls = 1", header)) == set()
    assert rules(with_body("threads = multiprocessing.cpu_count()", "import multiprocessing\n")) == set()


@pytest.mark.parametrize("line", [
    'os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"', 'os.environ["MAX_JOBS"] = "8"',
    'os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")', 'os.environ.update({"CXX": "g++", "CC": "gcc"})',
    'os.environ.update(TORCH_EXTENSIONS_DIR="build")', 'jobs = os.environ.get("MAX_JOBS", "4")',
])
def test_a_builds_environment_variables_are_no_finding(line):
    assert rules(with_body("pass", f"import os\n{line}\n")) == set()


@pytest.mark.parametrize("line", [
    'os.environ["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] = "1"', 'os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "1")',
    'os.putenv("NVIDIA_TF32_OVERRIDE", "1")', 'os.environ.update({"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"})',
    'os.environ[name] = "1"', 'os.environ.update(settings)', 'environ["NVIDIA_TF32_OVERRIDE"] = "1"',
])
def test_any_other_environment_variable_set_is_global_state(line):
    """PyTorch and the CUDA libraries read some (a TF32 override) when they start: how they compute."""
    assert "global-state" in rules(with_body("pass", f"import os\nfrom os import environ\n{line}\n"))


def test_a_handler_that_returns_a_default_constant_is_no_fallback():
    asks_the_device = ("def sm_count():\n    try:\n"
                       "        return torch.cuda.get_device_properties(0).multi_processor_count\n"
                       "    except Exception:\n        return 132\n")
    assert rules(with_body("pass", asks_the_device)) == set()
    assert "fallback" in rules(with_body("pass", asks_the_device.replace("return 132", "return torch.relu(x)")))
    assert "fallback" in rules(with_body("pass", asks_the_device.replace("return 132", "return x")))


def test_setting_what_the_judge_pins_to_the_pinned_value_is_no_finding():
    """An answer that switches TF32 off "to be sure of float32" changes nothing the judge pins."""
    as_pinned = ("torch.backends.cuda.matmul.allow_tf32 = False\ntorch.backends.cudnn.allow_tf32 = False\n"
                 "torch.backends.cudnn.benchmark = False\ntorch.set_float32_matmul_precision('highest')\n"
                 "torch.set_default_dtype(torch.float32)\n")
    assert rules(with_body("pass", "import torch\n" + as_pinned)) == set()
    for changed in ("torch.backends.cuda.matmul.allow_tf32 = True", "torch.backends.cudnn.benchmark = 1",
                    "torch.set_float32_matmul_precision('high')", "torch.backends.cudnn.deterministic = flag",
                    "torch.backends.cudnn.allow_tf32 = flag", "torch.set_default_dtype(torch.float64)"):
        assert "global-state" in rules(with_body("pass", f"import torch\n{changed}\n")), changed


def test_entering_the_stream_already_current_makes_no_stream():
    current = "stream = torch.cuda.current_stream(x.device)\n        with torch.cuda.stream(stream):\n            pass"
    assert rules(with_body(current)) == set()
    assert rules(with_body("with torch.cuda.stream(torch.cuda.default_stream()):\n            pass")) == set()
    rebound = current.replace("with", "if x.numel() > 9:\n            stream = pick_stream()\n        with")
    assert "side-stream" in rules(with_body(rebound))
    assert "side-stream" in rules(with_body("with torch.cuda.stream(s):\n            pass", "s = make()\n"))


def test_freeing_memory_and_silencing_output_are_no_finding():
    """gc.collect() shows nothing of the heap; the judge's answers go on a pipe of their own."""
    assert rules(with_body("gc.collect()", "import gc\n")) == set()
    assert rules(with_body("collect()", "from gc import collect\n")) == set()
    assert rules(with_body("pass", "import io, sys\nsys.stdout, sys.stderr = io.StringIO(), io.StringIO()\n")) == set()


@pytest.mark.parametrize("body", ["objs = gc.get_objects()", "g = gc", "f = getattr(gc, name)",
                                  "gc.callbacks.append(print)"])
def test_gc_beyond_collect_is_introspection(body):
    assert "introspection" in rules(with_body(body, "import gc\n"))


SEEDED_AT_IMPORT = ("import random\nimport numpy\nimport torch\n"
                    "torch.manual_seed(0)\nrandom.seed(0)\nnumpy.random.seed(0)\n")


def test_a_seed_outside_forward_is_no_finding_in_a_kernel_solution():
    """The judge seeds before it builds a model and before each draw of inputs: a seed set at
    import or in __init__ changes nothing it draws. In forward it stays a finding (the
    parametrised case above), and so does every seed in a repository's file, which any
    program may run."""
    at_import = with_body("pass", SEEDED_AT_IMPORT)
    in_init = with_body("pass").replace(
        "class ModelNew(torch.nn.Module):",
        "class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        torch.cuda.manual_seed_all(0)\n")
    assert rules(at_import) == set() and rules(in_init) == set()
    assert "global-state" in {f.rule for f in check_source(at_import, kernel_solution=False)}


SELF_TEST = """
if __name__ == "__main__":
    import sys, threading, time
    torch.manual_seed(0)
    threading.Thread(target=print).start()
    start = time.perf_counter()
    print(torch.tanh(torch.randn(4)), time.perf_counter() - start)
    sys.exit(0)
"""


def test_a_self_test_block_is_not_read_since_an_import_never_runs_it():
    source = with_body("pass") + SELF_TEST
    assert rules(source) == set()
    assert {"global-state", "threads", "process-exit"} <= {f.rule for f in check_source(source, kernel_solution=False)}
    beside_an_else = with_body("pass") + SELF_TEST + "else:\n    threading.Thread(target=print).start()\n"
    assert "threads" in rules(beside_an_else), "the else branch is what an import runs"


def test_a_self_test_block_does_not_run_when_the_solution_rebinds_its_name(tmp_path):
    """What the rules read is what runs: the block is gone from the module the worker executes."""
    path = tmp_path / "solution.py"
    path.write_text("import torch\n__name__ = '__main__'\nRAN = []\n"
                    "class ModelNew(torch.nn.Module):\n    pass\n"
                    "if __name__ == '__main__':\n    RAN.append('the self-test block')\n")
    try:
        model_class = import_solution(path)
        assert model_class.__name__ == "ModelNew" and sys.modules["kbench_solution"].RAN == []
    finally:
        sys.modules.pop("kbench_solution", None)


@pytest.mark.parametrize("header", [
    "@torch._dynamo.disable\ndef launch(x):\n    return x\n",
    "import torch._dynamo\n@torch._dynamo.disable()\ndef launch(x):\n    return x\n",
    "@torch.jit.ignore\ndef launch(x):\n    return x\n",
    "EAGER = not torch._dynamo.is_compiling()\n",
    "@torch.compiler.disable\ndef launch(x):\n    return x\n",
])
def test_keeping_a_function_out_of_a_compiler_compiles_nothing(header):
    assert rules(with_body("pass", "import torch\n" + header)) == set()


@pytest.mark.parametrize("header", [
    "import torch._dynamo\nf = torch._dynamo.optimize('eager')(print)\n", "from torch._dynamo import optimize\n",
    "@torch.jit.script\ndef f(x):\n    return x\n", "f = torch.compile(print)\n",
    "import torch._dynamo\ncompiler = torch._dynamo\n",  # the module as a value hides what of it is used
])
def test_a_compiler_used_is_torch_compile(header):
    assert "torch-compile" in rules(with_body("pass", "import torch\n" + header))


def test_looking_up_the_models_own_attributes_by_name_is_not_a_finding():
    assert rules(with_body("w = getattr(self, 'weight', None)")) == set()
    assert rules(with_body("setattr(self, 'calls', 1)")) == set()
    assert rules(with_body("w = getattr(self, name)")) == {"dynamic-access"}, "a computed name hides what it reads"


def test_an_index_that_reads_a_module_is_not_an_assignment_to_it():
    source = with_body("y = x.clone()\n        y[torch.arange(4), 0] += 1.0")
    assert "monkeypatch" not in rules(source)


def test_pure_pytorch_is_no_kernel_and_aliases_do_not_hide_calls():
    source = "import torch\nimport torch.nn.functional as F\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return F.relu(x)\n"
    assert rules(source) == {"no-kernel"}
    aliased = with_body("c(x)", header="from torch import compile as c\n")
    assert "torch-compile" in rules(aliased)


def test_a_triton_kernel_made_without_the_decorator_syntax_is_a_kernel():
    source = ("import torch\nimport triton\nimport triton.language as tl\n"
              "def body(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n"
              "kernel = triton.jit(body)\n"
              "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
              "        kernel[(1,)](x, x.numel(), BLOCK=16)\n        return x.clone()\n")
    assert "no-kernel" not in rules(source)
    assert "no-kernel" in rules(source.replace("kernel = triton.jit(body)", "kernel = triton.cdiv(body, 2)"))


def test_cuda_and_cpp_extensions_count_as_kernels():
    source = (
        "import torch\nfrom torch.utils.cpp_extension import load_inline\n"
        "ext = load_inline(name='e', cpp_sources='', cuda_sources='__global__ void k() {}', functions=[])\n"
        "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return ext.k(x)\n"
    )
    assert "no-kernel" not in rules(source)


def test_harmless_forms_are_left_alone():
    optional_import = "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n"
    assert rules(with_body("pass", header=optional_import)) == set()
    reraise = "try:\n            n = x.numel()\n        except Exception as exc:\n            raise RuntimeError('bad input') from exc"
    assert rules(with_body(reraise)) == set()
    attributes_of_self = "self.cache_size = 4"
    assert rules(with_body(attributes_of_self)) == set()
    writes_a_source_file = "open('kernel.cu', 'w').write('// source')"
    assert rules(with_body(writes_a_source_file)) == set()


@pytest.mark.parametrize("body", [
    "block = 64 if x.dtype in (torch.float16, torch.bfloat16) else 32",
    "assert x.dtype != torch.half, 'float32 only'",
    "block = {torch.float16: 64, torch.bfloat16: 64, torch.float32: 32}[x.dtype]",
])
def test_asking_which_dtype_a_tensor_has_lowers_no_precision(body):
    assert rules(with_body(body)) == set()
    assert "low-precision" in rules(with_body("positive = x.to(torch.float16) > 0"))


@pytest.mark.parametrize("context", [
    "torch.autocast('cuda', enabled=False)", "torch.cuda.amp.autocast(enabled=False)",
    "torch.autocast(device_type='cuda', dtype=torch.float16, enabled=False)",
])
def test_an_autocast_switched_off_keeps_float32(context):
    """Models wrap a float32 kernel in a disabled autocast to be sure nothing casts around it."""
    assert rules(with_body(f"with {context}:\n            pass")) == set()


@pytest.mark.parametrize("context", [
    "torch.autocast('cuda')", "torch.autocast('cuda', enabled=True)", "torch.autocast('cuda', enabled=self.fast)",
    "torch.cuda.amp.autocast()",
])
def test_an_autocast_left_on_lowers_precision(context):
    assert "low-precision" in rules(with_body(f"with {context}:\n            pass"))


def test_half_precision_is_only_a_finding_for_float32_problems():
    source = with_body("x = x.half()")
    assert "low-precision" not in {f.rule for f in check_source(source, problem_dtype="float16")}


def test_unparsable_source_has_no_findings_so_the_build_reports_it():
    assert check_source("def broken(:\n") == []


def test_policies():
    assert action("no-kernel", "strict") == "reject"
    assert action("no-kernel", "lenient") == "flag"
    assert action("patched-function", "lenient") == "reject"
    assert action("side-stream", "strict") == "flag"
    assert action("patched-function", "off") == "ignore"
    assert set(RULES) >= {"timer-mismatch", "speed-of-light", "timed-call-check", "reference-op"}


REFERENCE = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)

    def forward(self, x):
        return torch.tanh(self.linear(x))
'''


def test_reference_op_is_read_from_the_reference_model():
    calls_reference = with_body("if x.numel() > 10**9:\n            return torch.tanh(self.linear(x))")
    calls_reference = calls_reference.replace("class ModelNew(torch.nn.Module):", "class ModelNew(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.linear = torch.nn.Linear(n, n)\n")
    found = {f.rule for f in check_source(calls_reference, reference_source=REFERENCE)}
    assert "reference-op" in found
    uses_weights_only = with_body("w = self.linear.weight")
    assert "reference-op" not in {f.rule for f in check_source(uses_weights_only, reference_source=REFERENCE)}


def test_a_copy_of_the_reference_program_that_model_new_never_uses_is_not_read():
    """An answer often repeats the reference program (its Model, get_inputs) above ModelNew."""
    copied = REFERENCE + "\ndef get_inputs():\n    return [torch.randn(8, 8)]\n" + with_body("pass").replace(
        "import torch\n", "", 1)
    assert "reference-op" not in {f.rule for f in check_source(copied, reference_source=REFERENCE)}
    keeps_its_layers = copied.replace("class ModelNew(torch.nn.Module):", "class ModelNew(Model):")
    assert "reference-op" not in {f.rule for f in check_source(keeps_its_layers, reference_source=REFERENCE)}, \
        "ModelNew built on the copied Model overrides its forward"
    built_on_it = keeps_its_layers.replace("        pass\n", "        return super().forward(x)\n")
    assert "reference-op" in {f.rule for f in check_source(built_on_it, reference_source=REFERENCE)}
    through_a_helper = copied.replace("        pass\n", "        return helper(self, x)\n") + (
        "\ndef helper(model, x):\n    return Model.forward(model, x)\n")
    assert "reference-op" in {f.rule for f in check_source(through_a_helper, reference_source=REFERENCE)}


FALLBACK_HEAD = ("class ModelNew(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
                 "        self.linear = torch.nn.Linear(n, n)\n")


def _reference_op_under(test: str, dtype: str = "float32") -> bool:
    """Whether ``reference-op`` is found for a forward that calls the reference under ``if <test>:``."""
    source = with_body(f"if {test}:\n            return torch.tanh(self.linear(x))").replace(
        "class ModelNew(torch.nn.Module):", FALLBACK_HEAD)
    return "reference-op" in {f.rule for f in check_source(source, dtype, reference_source=REFERENCE)}


@pytest.mark.parametrize("test", [
    "not x.is_cuda", "x.is_cpu", "x.device.type == 'cpu'", "x.device.type != 'cuda'", "not torch.cuda.is_available()",
    "not x.is_cuda or x.dtype != torch.float32", "x.device.type != 'cuda' or not torch.cuda.is_available()",
])
def test_a_fallback_for_a_tensor_off_the_gpu_is_not_read(test: str) -> None:
    """A model's usual fallback runs only where the GPU judge never goes (where it does run, on
    a CPU, the recorder sees what it calls)."""
    assert not _reference_op_under(test)


@pytest.mark.parametrize("test, dtype", [
    ("x.is_cuda", "float32"), ("not x.is_cpu", "float32"), ("x.device.type == 'cuda'", "float32"),
    ("not x.is_cuda or x.numel() > 10", "float32"),  # taken on the GPU for large inputs
    ("x.is_cuda and x.numel() > 10", "float32"),
    ("x.dtype == torch.float32", "float32"),
    ("not x.is_cuda or x.dtype != torch.float32", "bfloat16"),  # the bfloat16 variant takes it on the GPU
    ("not self.linear.weight.is_cuda", "float32"),  # not an argument: the solution decides where it lives
    ("torch.empty(1).is_cpu", "float32"),
])
def test_a_branch_the_gpu_judge_takes_is_read(test: str, dtype: str) -> None:
    assert _reference_op_under(test, dtype)


def test_a_fallback_outside_forward_or_on_a_rebound_input_is_read() -> None:
    in_a_helper = with_body("return self.helper(x)").replace("class ModelNew(torch.nn.Module):", FALLBACK_HEAD + (
        "\n    def helper(self, x):\n        if not x.is_cuda:\n            return torch.tanh(self.linear(x))\n"
        "        return x\n"))
    assert "reference-op" in {f.rule for f in check_source(in_a_helper, reference_source=REFERENCE)}
    moved = with_body("x = x.cpu()\n        if not x.is_cuda:\n            return torch.tanh(self.linear(x)).cuda()"
                      ).replace("class ModelNew(torch.nn.Module):", FALLBACK_HEAD)
    assert "reference-op" in {f.rule for f in check_source(moved, reference_source=REFERENCE)}
    a_default_it_chose = with_body("if not y.is_cpu:\n            pass\n        else:\n"
                                   "            return torch.tanh(self.linear(x))").replace(
        "class ModelNew(torch.nn.Module):", FALLBACK_HEAD).replace("(self, x)", "(self, x, y=torch.empty(0))")
    assert "reference-op" in {f.rule for f in check_source(a_default_it_chose, reference_source=REFERENCE)}


def test_the_else_of_a_test_that_holds_on_the_gpu_is_not_read() -> None:
    source = with_body("if x.is_cuda:\n            pass\n        else:\n            return torch.tanh(self.linear(x))")
    assert "reference-op" not in {f.rule for f in check_source(source.replace(
        "class ModelNew(torch.nn.Module):", FALLBACK_HEAD), reference_source=REFERENCE)}
    expression = with_body("y = torch.tanh(self.linear(x)) if not x.is_cuda else x").replace(
        "class ModelNew(torch.nn.Module):", FALLBACK_HEAD)
    assert "reference-op" not in {f.rule for f in check_source(expression, reference_source=REFERENCE)}


def test_a_layer_built_to_hold_the_weights_is_not_a_layer_called():
    """nn.Linear(...) in __init__ holds the weights a kernel reads; only self.linear(x) calls it."""
    reference = REFERENCE.replace("torch.tanh(self.linear(x))", "self.linear(x)")
    holds = with_body("w = self.linear.weight").replace(
        "class ModelNew(torch.nn.Module):",
        "class ModelNew(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.linear = torch.nn.Linear(n, n)\n")
    assert "reference-op" not in {f.rule for f in check_source(holds, reference_source=reference)}
    calls = holds.replace("w = self.linear.weight", "x = self.linear(x)")
    assert "reference-op" in {f.rule for f in check_source(calls, reference_source=reference)}


# What forward ran, as the operation recorder names it, on each side (reference, candidate).
SOFTMAX_OPS = ["_softmax"]
LINEAR_TANH_OPS = ["addmm", "t", "tanh"]
HONEST_OPS = ["copy_", "empty", "empty_like", "new_empty", "set_"]  # a Triton launch through the interpreter


@pytest.mark.parametrize(
    "reference, candidate",
    [
        (SOFTMAX_OPS, HONEST_OPS),
        (LINEAR_TANH_OPS, HONEST_OPS + ["mm", "t"]),  # the product through cuBLAS, bias and tanh in a kernel
        (["convolution", "native_batch_norm", "relu"], ["convolution", "empty"]),  # conv, fused BN+ReLU kernel
        (["mm"], ["constant_pad_nd", "empty"]),  # padding for a Triton product
        (["addmm", "embedding", "native_layer_norm", "gelu"], ["embedding", "mm", "cat", "empty"]),
        (["relu"], ["mylib::relu", "empty"]),  # an extension's own operator
        (["relu"], ["_to_copy", "view", "contiguous", "zero_", "fill_", "clone"]),
        # lookups and masks keyed by indices, shapes or constants; a scatter that overwrites
        (["relu"], HONEST_OPS + ["index", "index_put_", "masked_fill", "arange", "tril", "ones", "_to_copy"]),
        (["relu"], HONEST_OPS + ["gather", "scatter", "index_select", "take", "masked_scatter"]),
    ],
)
def test_torch_compute_leaves_kernels_with_library_calls_and_glue_alone(reference, candidate):
    from kbench.judge.guard.ops import torch_compute_findings

    assert torch_compute_findings(reference, candidate) == []


@pytest.mark.parametrize(
    "reference, candidate, named",
    [
        (SOFTMAX_OPS, ["amax", "sub", "exp", "sum", "div", "empty_like"], "amax, div, exp, sub, sum"),
        (["relu"], ["clamp_min", "empty_like"], "clamp_min"),
        (["relu"], ["clamp_min_", "empty_like"], "clamp_min"),  # in place reads as its plain name
        (LINEAR_TANH_OPS, ["mm", "t", "tanh"], "tanh"),
        (["addmm", "t"], ["mm", "t", "empty_like"], "mm"),  # the product is the whole work
        (["mm", "tril"], ["mm"], "mm"),  # ... and masking it is moving data
        (["sum"], ["bmm", "ones"], "bmm"),  # a library call the reference does not make
        (["avg_pool2d"], ["convolution"], "convolution"),
        (["gather"], ["index", "empty"], "index"),  # moving data is all the reference does
        # data movement that computes, as the recorder names it (guard.provenance)
        (["relu"], HONEST_OPS + ["view", "_to_copy", "index[by value]", "masked_fill[by value]"],
         "index[by value], masked_fill[by value]"),
        (["sum"], HONEST_OPS + ["arange", "index_put[accumulate]"], "index_put[accumulate]"),
        (["sum"], HONEST_OPS + ["zeros", "scatter[reduce=add]"], "scatter[reduce=add]"),
        (["sum"], HONEST_OPS + ["zeros", "index_add_"], "index_add"),
        (["sum"], HONEST_OPS + ["zeros", "scatter_add_"], "scatter_add"),
    ],
)
def test_torch_compute_fires_whichever_operations_do_the_work(reference, candidate, named):
    from kbench.judge.guard.ops import torch_compute_findings

    findings = torch_compute_findings(reference, candidate)
    assert [f.rule for f in findings] == ["torch-compute"] and named in findings[0].message, findings


def _recorded(forward, *args):
    from kbench.judge.guard.runtime import OpRecorder

    with OpRecorder() as recorder:
        forward(*args)
    return recorder.ops


def test_the_recorder_names_data_movement_that_computes():
    """Accumulating scatters, and lookups or masks keyed by floating-point values forward
    converted (a cast, a bit view), whatever the lookup is called."""
    import warnings

    import torch
    import torch.nn.functional as F

    x, ids = torch.randn(4, 8), torch.randint(0, 8, (4, 8))
    sign_set = torch.arange(256) >= 128  # made outside forward, like a buffer

    def top_byte(t):
        return t.contiguous().view(torch.uint8)[..., 3::4].long()

    assert {"index[by value]", "masked_fill[by value]"} <= _recorded(lambda: x.masked_fill(sign_set[top_byte(x)], 0))
    assert "gather[by value]" in _recorded(lambda: x.gather(1, x.long().clamp_min(0)))  # a float cast to int64
    assert "masked_fill[by value]" in _recorded(lambda: x.masked_fill(x.bool(), 0))  # a float cast to bool
    assert "embedding[by value]" in _recorded(lambda: F.embedding(top_byte(x), sign_set.float()[:, None]))

    def assign(t):
        t = t.clone()
        t[sign_set[top_byte(t)]] = 0
        return t

    assert "index_put[by value]" in _recorded(assign, x)

    def kernel_output(t):  # what a kernel writes into an allocation is not a constant
        out = torch.empty_like(t)
        out.copy_(t)
        return t.masked_fill(sign_set[top_byte(out)], 0)

    assert "masked_fill[by value]" in _recorded(kernel_output, x)
    assert "index_put[accumulate]" in _recorded(lambda: torch.zeros(8).index_put_((ids[:, 0],), x[:, 0], accumulate=True))
    assert "put[accumulate]" in _recorded(lambda: torch.zeros(4).put_(ids[:, 0] % 4, x[:, 0], accumulate=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reduce= with a tensor source is deprecated
        assert "scatter[reduce=add]" in _recorded(lambda: torch.zeros(4, 8).scatter(1, ids, x, reduce="add"))
    assert "scatter[reduce=multiply]" in _recorded(lambda: torch.ones(4, 8).scatter(1, ids, 2.0, reduce="multiply"))


def test_the_recorder_leaves_glue_keyed_by_indices_shapes_and_constants_alone():
    """Embedding lookups of integer ids, gathers by the problem's indices, masks built
    from shapes (ones(...).tril(), arange) even when cast to bool, a permutation, an
    index_put that overwrites: none of them is qualified, so torch-compute reads them as glue."""
    import torch
    import torch.nn.functional as F

    x, ids, weight = torch.randn(4, 8), torch.randint(0, 8, (4, 8)), torch.randn(8, 3)
    given_mask = torch.rand(4, 8) < 0.5  # a boolean input

    def glue(x, ids, weight):
        F.embedding(ids, weight)
        x.gather(1, ids)
        x.index_select(1, ids[0])
        causal = torch.ones(8, 8).tril()[:4].bool()
        x.masked_fill(causal, float("-inf"))
        x.masked_fill(torch.arange(8).expand(4, 8).to(torch.bool), 0)
        x.masked_fill(given_mask, 0)
        order = torch.arange(32).flip(0)
        flat = x.reshape(-1)[order]
        out = torch.empty_like(flat)
        out[order] = flat
        out.index_put_((ids[:, 0],), x[:, 0])  # accumulate=False: overwrites (ids < 8 <= 32)
        torch.cat([x, x]).index_select(0, torch.tensor([0, 2]))
        ids.long().to(torch.int32)  # integer casts of integers

    ops = _recorded(glue, x, ids, weight)
    assert not [op for op in ops if "[" in op], sorted(ops)


def test_the_reference_op_rule_comes_first_on_the_recorded_operations():
    from kbench.judge.guard.reported import reference_op_findings

    rules = [f.rule for f in reference_op_findings(LINEAR_TANH_OPS, ["addmm", "t", "tanh", "empty"])]
    assert rules == ["reference-op", "torch-compute"]


def test_the_recorder_names_an_extensions_operators_with_their_namespace():
    import torch

    from kbench.judge.guard.runtime import OpRecorder

    @torch.library.custom_op("kbench_test::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    with OpRecorder() as recorder:
        out = twice(torch.ones(3))
    assert "kbench_test::twice" in recorder.ops and "kbench_test::twice" in recorder.foreign_ops
    assert "mul" in recorder.ops, "what the operator computes inside is recorded too"
    assert torch.equal(out, torch.full((3,), 2.0))


def test_speed_of_light_counts_the_judged_dtypes_bytes_and_the_units_peak():
    from kbench.core.hardware import speed_of_light_ms

    h200 = "NVIDIA H200"
    # Bytes as declared for float32 elements: halved when judged in a 16-bit dtype.
    assert speed_of_light_ms(h200, None, 4.8e9) == pytest.approx(1.0)
    assert speed_of_light_ms(h200, None, 4.8e9, "bfloat16") == pytest.approx(0.5)
    # float32 (no TF32: pinned) is held against the FP32 peak, 16-bit dtypes against the tensor cores'.
    assert speed_of_light_ms(h200, 67e9, None) == pytest.approx(1.0)
    assert speed_of_light_ms(h200, 989.4e9, None, "bfloat16") == pytest.approx(1.0)
    assert speed_of_light_ms("a GPU nobody listed", 1e12, 1e12) is None


def test_speed_of_light_finding_only_when_the_candidate_beats_it():
    from kbench.judge.guard.reported import speed_of_light_findings

    loaded = {"device_name": "NVIDIA H200", "work": {"flops": None, "bytes": 4.8e9}}
    limit, findings = speed_of_light_findings(1.2, loaded, "float32")
    assert limit == pytest.approx(1.0) and findings == []
    _, findings = speed_of_light_findings(0.7, loaded, "float32")
    assert [f.rule for f in findings] == ["speed-of-light"]
    _, findings = speed_of_light_findings(0.7, loaded, "bfloat16")  # 0.5 ms is the limit in bf16
    assert findings == []


@pytest.mark.slow
def test_a_compiled_extensions_function_counts_as_a_launched_kernel(monkeypatch):
    """What every load_inline solution relies on not to be read as PyTorch alone
    (CUDA ones bind their functions the same way, through pybind11)."""
    import os
    import sys

    import torch
    from torch.utils.cpp_extension import load_inline

    from kbench.judge.guard.runtime import LaunchWatch, OpRecorder

    # ninja comes with the test extra, into the environment's bin, which need not be on PATH
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    source = "torch::Tensor relu_cpu(torch::Tensor x) { return x.clamp_min(0); }"
    extension = load_inline("kbench_launch_probe", cpp_sources=source, functions=["relu_cpu"])
    x = torch.randn(8)
    with OpRecorder() as recorder, LaunchWatch() as watch:
        extension.relu_cpu(x)
    assert watch.findings(recorder) == []
    # ATen called from C++ goes through the dispatcher: the recorder sees it, and torch-compute reads it.
    from kbench.judge.guard.ops import torch_compute_findings

    assert "clamp_min" in recorder.ops
    assert [f.rule for f in torch_compute_findings(["relu"], recorder.ops)] == ["torch-compute"]
    with OpRecorder() as recorder, LaunchWatch() as watch:
        torch.relu(x)
    assert [f.rule for f in watch.findings(recorder)] == ["no-kernel"]


def test_a_replayed_cuda_graph_counts_the_launches_it_captured(monkeypatch):
    """An honest solution captures its own kernels into a CUDA graph once and replays it in
    forward: the replay launches them (three such corpus files were flagged no-kernel on the
    H200). A graph of PyTorch operations alone still counts for nothing."""
    import torch

    from kbench.judge.guard import captures
    from kbench.judge.guard.runtime import LaunchWatch, OpRecorder

    class Graph:  # torch.cuda.CUDAGraph's shape; a real one needs a GPU
        def capture_begin(self, *args, **kwargs):
            pass

        def capture_end(self):
            pass

        def replay(self):
            pass

    monkeypatch.setattr(torch.cuda, "CUDAGraph", Graph)
    captures.install(lambda: LaunchWatch(chain=True))
    kernels: dict = {}
    exec("def launch():\n    return 1\n", {"__name__": "numba.probe"}, kernels)  # a kernel package's launch
    own, plain = Graph(), Graph()
    with LaunchWatch() as around:  # captured inside another watch: that one still sees the launch
        own.capture_begin()
        kernels["launch"]()
        own.capture_end()
    assert around.launched == {"numba.probe"}
    plain.capture_begin()
    torch.relu(torch.ones(2))
    plain.capture_end()
    with OpRecorder() as recorder, LaunchWatch() as watch:
        own.replay()
    assert watch.findings(recorder) == [] and watch.launched == {"a CUDA graph of numba.probe"}
    with OpRecorder() as recorder, LaunchWatch() as watch:
        plain.replay()
    assert [f.rule for f in watch.findings(recorder)] == ["no-kernel"]


def test_the_host_clock_may_exceed_the_events_by_latency_but_not_by_hidden_work():
    from kbench.judge.guard.reported import timer_findings

    def findings(events_ms, host_ms):
        return [f.rule for f in timer_findings([{"clock": "cuda-events", "median_ms": events_ms, "host_median_ms": host_ms}])]

    assert findings(0.039, 0.1001) == []  # an honest tiny kernel: launch and sync latency (seen on the H200)
    assert findings(0.5, 1.5) == ["timer-mismatch"]  # a millisecond of work the events did not time
    assert findings(0.04, 0.4) == ["timer-mismatch"]


def test_the_host_clock_is_suspect_only_when_every_round_passes_the_events():
    """Hidden work is in every call; late wake-ups from the sync on a loaded machine in some rounds."""
    from kbench.judge.guard.reported import timer_findings

    def round_(events_ms, host_ms):
        return {"clock": "cuda-events", "median_ms": events_ms, "host_median_ms": host_ms}

    assert timer_findings([round_(0.5, 0.6), round_(0.5, 3.0), round_(0.5, 0.6)]) == []
    found = timer_findings([round_(0.5, 1.5), round_(0.5, 3.0), round_(0.5, 1.6)])
    assert [f.rule for f in found] == ["timer-mismatch"] and "1.5 ms" in found[0].message
