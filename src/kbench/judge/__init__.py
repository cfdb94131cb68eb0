"""The judge: everything that decides a verdict, and nothing else.

Owns the evaluation of one solution against one problem (``evaluation``), the
processes it runs in (``process``, ``sandbox``, ``worker``), the reference's side and the
baseline columns (``reference``, ``baselines``), the timing protocol
(``timing``), the comparison of outputs (``compare``), the guard's rules
(``guard``), the settings pinned in every worker (``state``), and builds ahead
of judging (``builds``) and many evaluations at once, one per device (``executor``; on Ray:
``ray_executor``, which imports Ray only when used). The candidate's process runs only ``worker`` and what
it imports; everything that decides runs in the judge's process or the
reference's.

May import: ``kbench.core`` and ``kbench.suite``; never the audit, runs,
agents or the CLI.
"""

from kbench.judge.builds.ahead import build, needs_build
from kbench.judge.processes.devices import cache_dir, default_device, resolve_device, worker_env
from kbench.judge.evaluation import DEFAULT_TIMEOUT, DEFAULT_TRIALS, evaluate
from kbench.judge.executor import (
    EXECUTORS,
    DeviceThreads,
    Executor,
    LocalExecutor,
    evaluate_many,
    local_devices,
    make_executor,
    next_result,
)
from kbench.judge.ray_executor import RayExecutor
from kbench.judge.trusted.reference import measure_baselines, time_reference

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_TRIALS",
    "EXECUTORS",
    "DeviceThreads",
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "build",
    "cache_dir",
    "default_device",
    "evaluate",
    "evaluate_many",
    "local_devices",
    "make_executor",
    "measure_baselines",
    "needs_build",
    "next_result",
    "resolve_device",
    "time_reference",
    "worker_env",
]
