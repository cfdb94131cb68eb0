"""Static findings about a module need the name bound to that module (issue 58).

Each rule both ways: the name bound to the module (by an import, an alias, an assignment
chain) finds as before; the same name bound to a value of the solution's own (a tensor, a
loop variable, an argument, a function) finds nothing; bound both ways, it is a flag
(``undecided``), never a rejection. Settings that cannot make a candidate faster or less
precise are no finding; the launch watch sees every way an extension's kernel is called.
"""

import sys

import pytest

from kbench.judge.guard import action
from kbench.judge.guard.static import check_source
from kbench.judge.worker.loading import import_solution

HEAD = "import torch\nimport triton\nimport triton.language as tl\n"
KERNEL = '''
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


def source(body: str = "pass", header: str = "") -> str:
    return HEAD + header + KERNEL.replace("{body}", body)


def rules(text: str) -> set[str]:
    return {f.rule for f in check_source(text)}


# (header, body, rule): the module's name bound to the module, read through an import, an
# alias or an assignment; the rule finds as it always did.
BOUND = [
    ("import signal\n", "signal.signal(signal.SIGALRM, print)", "process-exit"),
    ("import sys\n", "sys.exit(0)", "process-exit"),
    ("import sys as system\nleave = system.exit\n", "leave(0)", "process-exit"),
    ("from signal import alarm\n", "alarm(1)", "process-exit"),
    ("import gc\n", "objs = gc.get_objects()", "introspection"),
    ("import gc\nheap = gc\n", "objs = heap.get_objects()", "introspection"),
    ("import sys\n", "frame = sys._getframe(1)", "introspection"),
    ("import threading as th\nMake = th.Thread\n", "Make(target=print).start()", "threads"),
    ("import os\n", "os.write(4, b'{}')", "raw-io"),
    ("import os\nwrite = os.write\n", "write(4, b'{}')", "raw-io"),
    ("", "f = torch.jit.script(torch.relu)", "torch-compile"),
    ("jit = torch.jit\n", "f = jit.script(torch.relu)", "torch-compile"),
    ("import time\nclock = time\n", "clock.perf_counter = lambda: 0.0", "monkeypatch"),
    ("import sys\n", "m = sys.modules['kbench.judge.protocol.timing']", "harness-access"),
    ("import os\nenv = os.environ\n", "env['NVIDIA_TF32_OVERRIDE'] = '1'", "global-state"),
    ("cudnn = torch.backends.cudnn\n", "cudnn.benchmark = True", "global-state"),
]


@pytest.mark.parametrize("header, body, rule", BOUND)
def test_a_name_bound_to_the_module_finds_as_before(header, body, rule):
    assert rule in rules(source(body, header))
    assert action(rule, "lenient") == "reject"


# The same names bound to values of the solution's own: nothing to find.
OWN = [
    ("", "signal = x.contiguous()\n        y = signal.clone()"),  # a tensor named signal
    ("", "for gc in self.gcs:\n            w = gc.linear.weight"),  # a loop variable named gc
    ("", "ws = [gc.linear.weight for gc in self.gcs]"),
    ("", "sys = self.config\n        sys.exit = 1"),
    ("def exit(code):\n    return code\n", "exit(0)"),  # a function of its own named exit
    ("def launch(threading, os):\n    threading.Thread(target=print)\n    os.write(4, b'')\n", "pass"),
    ("def patch(time):\n    time.perf_counter = 0\n", "pass"),
    ("", "with open('log.txt') as signal:\n            signal.write('x')"),
    ("", "gc, signal = self.parts(x)\n        gc.get_objects(signal.alarm)"),
]


@pytest.mark.parametrize("header, body", OWN)
def test_the_same_name_bound_to_a_value_of_its_own_finds_nothing(header, body):
    assert rules(source(body, header)) == set()


# Bound to the module and to something else: a flag, never a rejection.
BOTH = [
    ("import signal\nsignal = torch.randn(4)\n", "s = signal.contiguous()", "process-exit"),
    ("import gc\ndef rebind():\n    global gc\n    gc = object()\n", "objs = gc.get_objects()", "introspection"),
    ("import sys\ndef leave(code, way=sys.exit):\n    way(code)\n", "pass", "process-exit"),
    ("import math\nimport sys\n", "for module in (sys, math):\n            module.exit(0)", "process-exit"),
]


@pytest.mark.parametrize("header, body, rule", BOTH)
def test_a_name_bound_both_ways_is_undecided_a_flag(header, body, rule):
    findings = check_source(source(body, header))
    assert [f.rule for f in findings] == ["undecided"], [f.text() for f in findings]
    assert findings[0].message.startswith(f"{rule}: ")
    assert action("undecided", "strict") == action("undecided", "lenient") == "flag"


# Every other static rule that reads a module's name, both ways in one row: (header, body) with
# the name bound to the module finds ``rule`` as it always did (a rejection or a flag, as the rule
# is); the same name bound to a value of the solution's own (an attribute, a function) finds nothing.
BOTH_WAYS = [
    ("import importlib\n", "m = importlib.import_module('kb' + 'ench')",
     "", "importlib = self.loader\n        m = importlib.import_module('kb' + 'ench')", "dynamic-access"),
    ("", "f = getattr(torch, 'syn' + 'chronize')",
     "def getattr(obj, name):\n    return name\n", "f = getattr(torch, 'syn' + 'chronize')", "dynamic-access"),
    ("", "f = compile('1', 'x', 'eval')", "def compile(fn):\n    return fn\n", "f = compile(torch.relu)",
     "dynamic-access"),
    ("", "f = torch.jit.script(torch.relu)", "", "jit = self.jit\n        f = jit.script(x)", "torch-compile"),
    ("import inspect\n", "fr = inspect.currentframe()", "", "inspect = self.viewer\n        fr = inspect.currentframe()",
     "introspection"),
    ("import subprocess\n", "subprocess.run(['ls'])", "", "subprocess = self.runner\n        subprocess.run(['ls'])",
     "threads"),
    ("import multiprocessing\n", "multiprocessing.Process(target=print).start()",
     "", "multiprocessing = self.pool\n        multiprocessing.Process(target=print).start()", "threads"),
    ("import builtins\n", "builtins.print = len", "", "builtins = self.table\n        builtins.print = len",
     "monkeypatch"),
    ("import sys\n", "m = sys.modules['kbench.judge.timing']",
     "", "sys = self.registry\n        m = sys.modules['kbench.judge.timing']", "harness-access"),
    ("import os\n", "os.environ['NVIDIA_TF32_OVERRIDE'] = '1'", "", "env = {}\n        env['NVIDIA_TF32_OVERRIDE'] = '1'",
     "global-state"),
    ("", "torch.backends.cudnn.benchmark = True", "", "cudnn = self.settings\n        cudnn.benchmark = True",
     "global-state"),
    ("", "torch.manual_seed(0)", "", "manual_seed = self.seed\n        manual_seed(0)", "global-state"),
    ("", "s = torch.cuda.Stream()", "", "Stream = self.make_stream\n        s = Stream()", "side-stream"),
    ("", "y = x.to(torch.float16)", "", "float16 = self.dtype\n        y = x.to(float16)", "low-precision"),
]


@pytest.mark.parametrize("header, body, own_header, own_body, rule", BOTH_WAYS,
                         ids=[f"{row[-1]}-{index}" for index, row in enumerate(BOTH_WAYS)])
def test_every_static_rule_both_ways(header, body, own_header, own_body, rule):
    assert rule in rules(source(body, header))
    assert rules(source(own_body, own_header)) == set()


# An attribute a module lacks, added (``if not hasattr(tl, "gelu"): tl.gelu = ...``, a name the
# loaded module does not have): nothing of the module is replaced, so no monkeypatch; an
# attribute the module has, assigned (guarded by another name or not at all), still is one.
@pytest.mark.parametrize("header", [
    "@triton.jit\ndef _gelu(x):\n    return x\nif not hasattr(tl, 'gelu_helper'):\n    tl.gelu_helper = _gelu\n",
    "torch.my_helper_constant = 3\n",
    "if not hasattr(torch, 'matmul'):\n    torch.matmul = print\n",  # never runs: torch has matmul
])
def test_an_attribute_a_module_lacks_added_is_no_monkeypatch(header):
    assert rules(source("pass", header)) == set()


@pytest.mark.parametrize("header", [
    "torch.matmul = print\n",
    "if not hasattr(torch, 'nn'):\n    torch.matmul = print\n",  # guarded by another name: runs, replaces matmul
    "import time\nif not hasattr(time, 'monotonic_ns'):\n    pass\ntime.perf_counter = print\n",
])
def test_an_attribute_a_module_has_assigned_stays_monkeypatch(header):
    assert "monkeypatch" in rules(source("pass", header))


def test_a_path_in_a_string_is_no_rejection():
    """The system's information read to choose build flags is no finding; a process's
    descriptors named in a string are a flag: what is opened, the results channel decides."""
    cpuinfo = "flags = ['-mavx2'] if 'avx2' in open('/proc/cpuinfo').read() else []\n"
    assert rules(source("pass", cpuinfo)) == set()
    assert rules(source("fds = os.listdir('/proc/self/fd')", "import os\n")) == {"undecided"}
    assert "raw-io" in rules(source("os.write(4, b'{}')", "import os\n"))


def test_torch_jit_final_as_an_annotation_compiles_nothing():
    final = "from torch.jit import Final\n"
    annotated = source("pass", final).replace("class ModelNew(torch.nn.Module):",
                                              "class ModelNew(torch.nn.Module):\n    eps: Final[float]\n")
    assert rules(annotated) == set()
    assert "torch-compile" in rules(source("pass", "from torch.jit import script\n"))


SELF_TESTED = '''
def _check(model):
    out = model(torch.randn(4))
    return bool(torch.isfinite(out).all())

def _self_test():
    import sys
    torch.manual_seed(0)
    sys.exit(0 if _check(ModelNew()) else 1)

if __name__ == "__main__":
    _self_test()
'''


def test_functions_only_the_self_test_block_calls_are_not_read():
    assert rules(source("pass") + SELF_TESTED) == set()
    called = source("_self_test()") + SELF_TESTED  # forward reaches it: it runs, and is read
    assert "process-exit" in rules(called)
    decorated = source("pass") + SELF_TESTED.replace("def _self_test", "@register\ndef _self_test")
    assert "process-exit" in rules(decorated), "a decorator runs on import"
    assert "process-exit" in {f.rule for f in check_source(source("pass") + SELF_TESTED, kernel_solution=False)}


def test_functions_only_the_self_test_block_calls_do_not_run(tmp_path):
    path = tmp_path / "solution.py"
    path.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"
                    "def _only_tested():\n    return 1\ndef _used():\n    return 2\nKEPT = _used()\n"
                    "if __name__ == '__main__':\n    _only_tested()\n")
    try:
        import_solution(path)
        module = sys.modules["kbench_solution"]
        assert not hasattr(module, "_only_tested") and module.KEPT == 2
    finally:
        sys.modules.pop("kbench_solution", None)


@pytest.mark.parametrize("line", [
    "torch.backends.cudnn.deterministic = True", "torch.use_deterministic_algorithms(True)",
    "torch.use_deterministic_algorithms(True, warn_only=True)",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False",
    "torch.backends.cudnn.enabled = True",
    "os.environ.setdefault('TRITON_INTERPRET', '1')", "os.environ['TRITON_INTERPRET'] = '1'",
    "os.environ.setdefault('TRITON_CACHE_DIR', '/tmp/triton')",
])
def test_a_setting_that_cannot_speed_up_or_lower_precision_is_no_finding(line):
    assert rules(source("pass", f"import os\n{line}\n")) == set()


@pytest.mark.parametrize("line", [
    "torch.backends.cudnn.deterministic = flag", "torch.use_deterministic_algorithms(flag)",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True",
    "torch.backends.cudnn.benchmark = True", "os.environ['TRITON_INTERPRET'] = mode",
    "os.environ.setdefault('NVIDIA_TF32_OVERRIDE', '1')", "os.environ['TRITON_CACHE_DIR'] = '/tmp/planted'",
])
def test_a_setting_that_may_speed_up_stays_global_state(line):
    assert "global-state" in rules(source("pass", f"import os\n{line}\n"))


@pytest.mark.parametrize("header, body", [
    ("class Fn(torch.autograd.Function):\n    @staticmethod\n"
     "    @torch.amp.custom_fwd(device_type='cuda', cast_inputs=torch.float32)\n    def forward(ctx, x):\n"
     "        return x\n", "pass"),
    ("class Fn(torch.autograd.Function):\n    @staticmethod\n    @torch.cuda.amp.custom_fwd\n"
     "    def forward(ctx, x):\n        return x\n", "pass"),
    ("", "with torch.autocast(device_type='cuda', dtype=torch.float32):\n            pass"),
])
def test_casting_up_to_float32_is_not_low_precision(header, body):
    assert rules(source(body, header)) == set()


@pytest.mark.parametrize("header, body", [
    ("class Fn(torch.autograd.Function):\n    @staticmethod\n"
     "    @torch.amp.custom_fwd(device_type='cuda', cast_inputs=torch.float16)\n    def forward(ctx, x):\n"
     "        return x\n", "pass"),
    ("", "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n            pass"),
])
def test_casting_down_stays_low_precision(header, body):
    assert "low-precision" in rules(source(body, header))


def test_a_setting_the_judge_pins_changed_only_to_slow_down_is_no_runtime_finding():
    import torch

    from kbench.judge.guard.runtime import RuntimeGuard

    def changed() -> str:
        return " ".join(f.message for f in guard.state_findings() if f.rule == "global-state")

    guard = RuntimeGuard(torch.device("cpu"))
    try:
        torch.backends.cudnn.deterministic = True
        assert "cudnn.deterministic" not in changed()
        torch.backends.cudnn.benchmark = True
        assert "cudnn.benchmark=True" in changed()
    finally:
        torch.backends.cudnn.deterministic = False
        torch.backends.cudnn.benchmark = False


def _kernel_package_launch():
    launched: dict = {}
    exec("def launch(x):\n    return x\n", {"__name__": "numba.probe"}, launched)  # a kernel package's launch
    return launched["launch"]


def test_the_launch_watch_sees_launches_in_threads_forward_starts():
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from kbench.judge.guard.runtime import LaunchWatch, OpRecorder

    launch = _kernel_package_launch()
    with OpRecorder() as recorder, LaunchWatch() as watch:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(launch, range(4)))
    assert watch.findings(recorder) == [] and watch.launched == {"numba.probe"}
    with OpRecorder() as recorder, LaunchWatch() as watch:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(torch.relu, [torch.ones(2)] * 2))
    assert [f.rule for f in watch.findings(recorder)] == ["no-kernel"]


def test_the_launch_watch_sees_an_extension_operator_that_decomposes_before_the_recorder():
    """An operator registered as a composite kernel (what TORCH_LIBRARY's m.def(schema, fn)
    does) never reaches the recorder's dispatch mode: its call through torch.ops is seen."""
    import torch

    from kbench.judge.guard.runtime import LaunchWatch, OpRecorder

    library = torch.library.Library("kbench_names_probe", "DEF")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
    with OpRecorder() as recorder, LaunchWatch() as watch:
        torch.ops.kbench_names_probe.twice(torch.ones(3))
    assert recorder.foreign_ops == set() and watch.launched == {"kbench_names_probe::twice"}
    assert watch.findings(recorder) == []
    with OpRecorder() as recorder, LaunchWatch() as watch:
        torch.ops.aten.relu(torch.ones(3))
    assert [f.rule for f in watch.findings(recorder)] == ["no-kernel"]


EXTENSION = r'''
#include <torch/extension.h>
struct Scale {
  float factor;
  explicit Scale(float f) : factor(f) {}
  torch::Tensor operator()(torch::Tensor x) const {
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = in[i] * factor;
    return y;
  }
};
torch::Tensor scaled(torch::Tensor x) { return Scale(2.f)(x); }
TORCH_LIBRARY(kbench_names_ext, m) { m.def("scaled(Tensor x) -> Tensor", &scaled); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  pybind11::class_<Scale>(m, "Scale").def(pybind11::init<float>()).def("__call__", &Scale::operator());
  m.def("scaled", &scaled);
}
'''


@pytest.mark.slow
def test_the_launch_watch_sees_every_way_an_extension_is_called(monkeypatch):
    """A pybind11 object's __call__, an operator of the extension through torch.ops, a
    function from a thread pool: each is a launch of the solution's own; PyTorch is not."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import torch
    from torch.utils.cpp_extension import load_inline

    from kbench.judge.guard.runtime import LaunchWatch, OpRecorder

    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    extension = load_inline("kbench_names_ext", cpp_sources=EXTENSION)
    scale, x = extension.Scale(2.0), torch.randn(8)

    def pooled():
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(extension.scaled, [x, x]))

    for call in (lambda: scale(x), lambda: torch.ops.kbench_names_ext.scaled(x), pooled):
        with OpRecorder() as recorder, LaunchWatch() as watch:
            call()
        assert watch.findings(recorder) == [] and watch.launched, watch.launched
    assert type(scale).__call__ is vars(type(scale))["__call__"] and not hasattr(type(scale).__call__, "__code__")
    assert torch.equal(scale(x), x * 2)
    with OpRecorder() as recorder, LaunchWatch() as watch:
        torch.mul(x, 2)
    assert [f.rule for f in watch.findings(recorder)] == ["no-kernel"]
