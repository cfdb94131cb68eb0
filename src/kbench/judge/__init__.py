"""The judge: everything that decides a verdict, and nothing else.

Laid out by its trust boundary (docs/architecture.md):

- ``trusted/``: the facts a verdict rests on, made in the judge's process and the
  reference worker: seeds and the judge's clock, the candidate's answers checked,
  the reference and its columns, the correctness criterion and the truth;
- ``exchange/``: what crosses between processes: shared memory, packed outputs,
  the worker's own JSON;
- ``worker/``: the worker program, which runs in the candidate's process too:
  nothing it computes there is trusted;
- ``protocol/``: the measurement protocol: a call's timing, rounds, pairs, intervals;
- ``processes/``: worker processes, the sandbox, devices, spares;
- ``builds/``: the build folder of a source, builds ahead of judging;
- ``guard/``: the guard's rules (static, runtime, reported, policy).

Here at the top, the orchestration that may use all of them: ``evaluation``
(one solution, one problem, one verdict), ``confirmation`` (a rejection noise
could make, judged again), ``executor`` and ``ray_executor`` (many evaluations).

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
