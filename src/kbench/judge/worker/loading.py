"""What a worker loads before any call: the problem the judge's message names (checked
against its hash), the solution's ``ModelNew``, and what models and inputs are made from
(seeded, on the device, floating point in the judged dtype), and what the worker reports
of where it runs (versions, the device's name). Shared by ``load``, which judges with them,
and ``build``, which only builds ahead (kbench.judge.worker.session)."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import torch

from kbench.core.versions import package_version
from kbench.judge.exchange.failure import Failure, phase
from kbench.judge.worker.self_test import without_self_tests
from kbench.suite.problem import Problem


def work_counts(module: Any) -> dict[str, float | None]:
    """The problem's declared operation and byte counts at this size, where it declares them."""
    counts: dict[str, float | None] = {}
    for key, function in (("flops", "kbench_flops"), ("bytes", "kbench_bytes")):
        try:
            counts[key] = float(getattr(module, function)())
        except Exception:
            counts[key] = None
    return counts


def problem_from(msg: dict[str, Any]) -> Problem:
    """The problem a ``load`` (or ``build``) names, checked against its hash."""
    problem = Problem(Path(msg["problem_path"]), "", "", None, msg["problem_sha256"], msg["small"],
                      dtype_sizes=msg.get("dtype_sizes", {}), source=msg["problem_source"])
    if hashlib.sha256(problem.source.encode()).hexdigest() != problem.sha256:
        raise Failure("problem", "the problem's source does not match its hash")
    return problem


def import_solution(path: Path) -> Any:
    """Import a solution file and return its ``ModelNew``: a ``build`` failure otherwise.
    The file runs as the static rules read it: without its self-test block
    (kbench.judge.worker.self_test), which an import never runs."""
    with phase("build"):
        spec = importlib.util.spec_from_file_location("kbench_solution", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["kbench_solution"] = module
        tree = without_self_tests(ast.parse(path.read_bytes(), str(path)))
        exec(compile(tree, str(path), "exec"), module.__dict__)
    model_class = getattr(module, "ModelNew", None)
    if model_class is None:
        raise Failure("build", "the solution defines no ModelNew")
    if not (isinstance(model_class, type) and issubclass(model_class, torch.nn.Module)):
        raise Failure("build", "ModelNew is not a subclass of torch.nn.Module")
    return model_class


def seeded(seed: int, make: Any) -> list[Any]:
    torch.manual_seed(seed)
    random.seed(seed)
    return list(make())


def to_device(x: Any, device: torch.device) -> Any:
    return x.to(device) if isinstance(x, torch.Tensor) else x


def dtype_named(name: str) -> torch.dtype | None:
    """The dtype a problem is judged in; None for float32, the file as written."""
    return None if name == "float32" else getattr(torch, name)


def cast(x: Any, dtype: torch.dtype | None) -> Any:
    """Floating-point inputs in the judged dtype; integers (indices, targets) stay as drawn."""
    if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(dtype)
    return x


def versions(requires: list[str]) -> dict[str, str | None]:
    """Versions of what computes the reference: also of the modules the problem
    requires (a transformers block's weights depend on the transformers version)."""
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        **{name: package_version(name) for name in ["triton", *requires]},
    }


def device_name(device: torch.device) -> str:
    """What a verdict names the device by: the GPU's name, or the CPU's."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform

    return platform.processor() or platform.machine() or "cpu"
