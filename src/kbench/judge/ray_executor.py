"""Many evaluations at once on Ray: each evaluation a Ray task holding one GPU (one CPU
on a machine or cluster without GPUs), builds as CPU tasks ahead of them, results
streamed back to the caller's thread as they finish.

Without an address it starts a local Ray instance (``ray.init()``); with one it joins
that cluster (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``), so the same command runs
on a laptop and on a cluster. Ray does the scheduling, the transport and the retries of
tasks whose worker was lost; nothing here schedules beyond submitting tasks and
waiting for them (``ray.wait``). Ray is optional (``pip install 'kbench[ray]'``): it is
imported only when a ``RayExecutor`` is made, never on the evaluation path otherwise.

What a task runs is what ``LocalExecutor`` would run: ``run(item, device)`` in a Ray
worker process, which starts the judge's own sandboxed processes as in any evaluation.
A GPU task sees only the GPU Ray gave it (Ray sets ``CUDA_VISIBLE_DEVICES``), so its
device is ``cuda:0``; Ray runs each GPU task in a fresh worker process (``max_calls=1``),
so no CUDA state of one task's GPU carries over to another's. Ray also sets
``OMP_NUM_THREADS`` to the task's CPUs (1), which the judge's workers inherit.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterator, Sequence, TypeVar

from kbench.core.versions import install_hint, package_version

Item = TypeVar("Item")
Result = TypeVar("Result")
POLL_SECONDS = 0.2  # how often the waiting caller looks up, so that Ctrl-C is seen promptly
RAY_REQUIREMENT = "'ray>=2.10'"


def import_ray() -> Any:
    """The ``ray`` module; ImportError naming the install command where it is missing."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"the ray executor needs Ray: {install_hint(RAY_REQUIREMENT, 'ray')}") from exc
    return ray


class RayExecutor:
    """Runs jobs as Ray tasks: ``device`` ``cuda`` (or ``cuda:N``: Ray picks the GPU) holds
    one GPU per evaluation, ``cpu`` one CPU; None: GPUs where the cluster has any.
    ``build_jobs``: build tasks (one CPU each) in flight ahead of the evaluations (none:
    each evaluation builds its own). ``init_options`` go to ``ray.init`` when this
    process has not joined Ray yet (a caller that has, with its own options, keeps them)."""

    kind = "ray"

    def __init__(self, address: str | None = None, device: str | None = None, build_jobs: int = 0,
                 **init_options: Any):
        if device is not None and device != "cpu" and device != "cuda" and not device.startswith("cuda:"):
            raise ValueError(f"device {device!r}: the ray executor takes cpu or cuda")
        self.ray = import_ray()
        self.address = address
        self.device = device
        self.build_jobs = build_jobs
        self.init_options = init_options

    def connect(self) -> Any:
        """Join Ray (start a local instance without an address) unless this process has."""
        ray = self.ray
        if not ray.is_initialized():
            local = {"include_dashboard": False} if self.address is None else {}
            ray.init(address=self.address, **(local | self.init_options))
        return ray

    def on_gpus(self) -> bool:
        """Whether the evaluations hold GPUs; ValueError where a GPU run meets a cluster without any."""
        gpus = self.connect().cluster_resources().get("GPU", 0)
        if self.device is None:
            return gpus > 0
        if self.device.startswith("cuda") and not gpus:
            where = self.address or "the local Ray instance"
            raise ValueError(f"device {self.device}: {where} has no GPU (its resources: "
                             f"{self.ray.cluster_resources()})")
        return self.device.startswith("cuda")

    def describe(self) -> dict[str, Any]:
        """What a run's manifest records of how it was judged."""
        return {"kind": self.kind, "address": self.address or "local", "device": self.device,
                "build_jobs": self.build_jobs, "ray": package_version("ray")}

    def map(self, items: Sequence[Item], run: Callable[[Item, str], Result],
            prebuild: Callable[[Item, str], Any] | None = None,
            needs_build: Callable[[Item], bool] | None = None) -> Iterator[tuple[int, Result]]:
        """``(index in items, run(item, device))`` for every item, as each finishes; builds
        ahead of those ``needs_build`` names (None: all), ``build_jobs`` at a time. An
        exception in a job is raised here, in the caller's thread; then, as when the
        caller stops early (Ctrl-C), the tasks not finished are cancelled (a running one
        sees KeyboardInterrupt, so its evaluation cleans up its processes)."""
        if not items:
            return
        ray = self.connect()
        gpus = self.on_gpus()
        # A GPU task: one GPU, one CPU for the judge's own processes, a fresh worker each time.
        evaluation = ray.remote(num_gpus=1 if gpus else 0, num_cpus=1, max_calls=1 if gpus else 0)(_evaluate)
        builder = ray.remote(num_cpus=1, max_calls=1 if gpus else 0)(_build)
        run_ref = ray.put(run)
        build_ref = ray.put(prebuild) if prebuild is not None and self.build_jobs else None
        to_build = collections.deque(i for i, item in enumerate(items) if needs_build is None or needs_build(item))
        builds: dict[Any, int] = {}
        evaluations: dict[Any, int] = {}
        finished: set[int] = set()

        def more_builds() -> None:
            while build_ref is not None and to_build and len(builds) < self.build_jobs:
                index = to_build.popleft()
                if index not in finished:  # still worth building ahead
                    builds[builder.remote(build_ref, items[index], gpus)] = index

        try:
            for index, item in enumerate(items):
                evaluations[evaluation.remote(run_ref, item, gpus)] = index
            more_builds()
            while evaluations:
                ready, _ = ray.wait([*evaluations, *builds], num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    if ref in builds:  # its outcome is the evaluation's to report
                        del builds[ref]
                        more_builds()
                        continue
                    index = evaluations.pop(ref)
                    finished.add(index)
                    yield index, ray.get(ref)
        finally:
            for ref in [*evaluations, *builds]:
                try:
                    ray.cancel(ref)
                except Exception:  # noqa: BLE001 - finished meanwhile, or Ray is going down
                    pass


def _evaluate(run: Callable[[Any, str], Any], item: Any, gpus: bool) -> Any:
    """In a Ray worker: the job, on the one GPU Ray made visible to this task, or the CPU."""
    return run(item, "cuda:0" if gpus else "cpu")


def _build(prebuild: Callable[[Any, str], Any], item: Any, gpus: bool) -> str | None:
    """In a Ray worker: a build ahead, on a node's first GPU for a GPU run (a CPU task sees
    the node's GPUs without holding one: the build only compiles); the error, if any,
    as text, since a failed build is the evaluation's to report."""
    try:
        prebuild(item, "cuda:0" if gpus else "cpu")
    except Exception as exc:  # noqa: BLE001 - e.g. a node without GPUs, or an old Ray that hides them
        return f"{type(exc).__name__}: {exc}"
    return None
